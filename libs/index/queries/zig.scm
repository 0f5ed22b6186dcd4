; Zig: functions (a function returning a `struct` is a generic type's constructor),
; structs, enums and unions bound to a const (`const Point = struct {...}`) with their
; member functions, `test "..." {}` blocks as tests; calls by name and through a field
; (`std.testing.expectEqual`); `@import("std")`.

(function_declaration name: (identifier) @name) @definition.function
(variable_declaration (identifier) @name [(struct_declaration) (opaque_declaration)]) @definition.class
(variable_declaration (identifier) @name [(enum_declaration) (union_declaration)]) @definition.type

(test_declaration (string (string_content) @name)) @definition.test

(call_expression function: (identifier) @name) @reference.call
(call_expression function: (field_expression object: (_) @receiver member: (identifier) @name)) @reference.call

(builtin_function (builtin_identifier) @_import (arguments (string (string_content) @import.path)) (#eq? @_import "@import")) @import
