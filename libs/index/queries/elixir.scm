; Elixir: modules (`defmodule Shop.Cart`), protocols and their implementations, public
; and private functions, macros, guards and delegates (named `Shop.Cart.total`); ExUnit
; `test "..." do` cases; local and remote calls (`Enum.map`); alias, import, require and
; use. A definition's head (`def total(cart)`) is not a call.

(call target: (identifier) @_def (arguments (alias) @name) (#any-of? @_def "defmodule" "defprotocol")) @definition.module
(call target: (identifier) @_def (arguments (alias) @name) (#eq? @_def "defimpl")) @definition.module

(call
  target: (identifier) @_def
  (arguments [
    (call target: (identifier) @name) @head
    (identifier) @name
    (binary_operator left: (call target: (identifier) @name) @head)
  ])
  (#any-of? @_def "def" "defp" "defmacro" "defmacrop" "defguard" "defguardp" "defdelegate")) @definition.function

(call
  target: (identifier) @_test
  (arguments . (string (quoted_content) @name))
  (#eq? @_test "test")) @definition.test

(call
  target: (identifier) @name
  (#not-any-of? @name "def" "defp" "defmodule" "defmacro" "defmacrop" "defguard" "defguardp" "defdelegate" "defstruct" "defprotocol" "defimpl" "defexception" "alias" "import" "require" "use" "test" "describe" "setup" "if" "unless" "case" "cond" "with" "for" "quote" "unquote" "fn" "receive" "try" "moduledoc" "doc" "spec" "type" "typep" "opaque" "callback" "impl" "behaviour" "derive" "enforce_keys" "moduletag" "tag")) @reference.call
(call target: (dot left: (_) @receiver right: (identifier) @name)) @reference.call

(call target: (identifier) @_use (arguments . (alias) @import.path) (#any-of? @_use "alias" "import" "require" "use")) @import
