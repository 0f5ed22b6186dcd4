; Dart: classes, mixins, extensions and enums with what they extend and implement,
; methods, getters and setters, constructors, top-level functions, static constants;
; package:test `test('...', () {})` cases; calls by name and on a receiver; imports.

(class_declaration name: (identifier) @name) @definition.class
(class_declaration name: (identifier) @name superclass: (superclass type: (type (type_identifier) @base))) @definition.class
(class_declaration name: (identifier) @name interfaces: (interfaces (type (type_identifier) @base))) @definition.class
(mixin_declaration name: (identifier) @name) @definition.class
(extension_declaration name: (identifier) @name) @definition.class
(enum_declaration name: (identifier) @name) @definition.type

(method_declaration signature: (method_signature (function_signature name: (identifier) @name))) @definition.method
(method_declaration signature: (method_signature (getter_signature name: (identifier) @name))) @definition.method
(method_declaration signature: (method_signature (setter_signature name: (identifier) @name))) @definition.method
(method_declaration signature: (method_signature (constructor_signature name: (identifier) @name))) @definition.method
(function_declaration signature: (function_signature name: (identifier) @name)) @definition.function
(member_declaration (declaration (static_final_declaration_list (static_final_declaration name: (identifier) @name)))) @definition.constant

(call_expression
  function: (identifier) @_test
  arguments: (arguments . (string_literal) @name)
  (#any-of? @_test "test" "testWidgets")) @definition.test

(call_expression function: (identifier) @name) @reference.call
(call_expression function: (member_expression object: (_) @receiver property: (identifier) @name)) @reference.call

(import_specification uri: (configurable_uri) @import.path alias: (identifier)? @import.alias) @import
