; Scala: the file's package, traits, classes, case classes, objects (a companion
; object's members are `Pricer.apply`) and enums with what they extend, defs (declared
; or defined), vals in objects; ScalaTest `test("...") { }` cases; calls by name, on a
; receiver, and `new T`; imports.

(package_clause name: (package_identifier) @name) @package

(trait_definition name: (identifier) @name) @definition.interface
(trait_definition name: (identifier) @name extend: (extends_clause type: (_) @base)) @definition.interface
(class_definition name: (identifier) @name) @definition.class
(class_definition name: (identifier) @name extend: (extends_clause type: (_) @base)) @definition.class
(object_definition name: (identifier) @name) @definition.class
(enum_definition name: (identifier) @name) @definition.type

(function_definition name: (identifier) @name) @definition.function
(function_declaration name: (identifier) @name) @definition.method
(object_definition body: (template_body (val_definition pattern: (identifier) @name) @definition.constant))

(call_expression
  function: (call_expression function: (identifier) @_test arguments: (arguments . (string) @name)) @head
  (#any-of? @_test "test" "it" "should" "scenario")) @definition.test

(call_expression function: (identifier) @name) @reference.call
(call_expression function: (field_expression value: (_) @receiver field: (identifier) @name)) @reference.call
(instance_expression (type_identifier) @name) @reference.call

(import_declaration) @import.path @import
