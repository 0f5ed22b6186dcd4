; Ruby: modules and classes (nested or written `A::B`) with their superclass, instance
; methods (`Shop::Cart#total`) and singleton methods (`Shop::Cart.from_json`), constants;
; RSpec examples (`it "..."`) as tests; calls with or without a receiver (`X.new` is a
; call of X); `require` and `require_relative`. A method called without parentheses or
; arguments reads like a local variable and is not recorded.

(module name: [(constant) (scope_resolution)] @name) @definition.module
(class name: [(constant) (scope_resolution)] @name) @definition.class
(class name: [(constant) (scope_resolution)] @name superclass: (superclass [(constant) (scope_resolution)] @base)) @definition.class
(method name: (_) @name) @definition.method
(singleton_method name: (_) @name) @definition.singleton
(assignment left: (constant) @name) @definition.constant

(call
  method: (identifier) @_example
  arguments: (argument_list . (string (string_content) @name))
  block: (_)
  (#any-of? @_example "it" "specify" "example" "scenario" "test")) @definition.test

(call receiver: (_) @receiver method: (identifier) @name (#not-eq? @name "new")) @reference.call
(call !receiver method: (identifier) @name (#not-any-of? @name "require" "require_relative" "load" "it" "describe" "context" "specify")) @reference.call
(call receiver: [(constant) (scope_resolution)] @name method: (identifier) @_new (#eq? @_new "new")) @reference.call

(call
  method: (identifier) @_require
  arguments: (argument_list (string (string_content) @import.path))
  (#any-of? @_require "require" "require_relative" "load")) @import
