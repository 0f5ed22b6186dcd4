; Lua: functions, local functions, functions on a module table (`M.parse`) and methods
; (`Account:deposit`, named `Account.deposit`), functions assigned to a name; busted
; `it("...", function() end)` cases; calls by name, through a table and with `:`;
; `require("x")`.

(function_declaration name: [(identifier) (dot_index_expression) (method_index_expression)] @name) @definition.function
(assignment_statement
  (variable_list name: [(identifier) (dot_index_expression)] @name)
  (expression_list value: (function_definition))) @definition.function

(function_call
  name: (identifier) @_it
  arguments: (arguments . (string content: (string_content) @name) (function_definition))
  (#any-of? @_it "it" "test" "spec" "pending")) @definition.test

(function_call name: (identifier) @name (#not-eq? @name "require")) @reference.call
(function_call name: (dot_index_expression table: (_) @receiver field: (identifier) @name)) @reference.call
(function_call name: (method_index_expression table: (_) @receiver method: (identifier) @name)) @reference.call

(function_call
  name: (identifier) @_require
  arguments: (arguments (string content: (string_content) @import.path))
  (#eq? @_require "require")) @import
