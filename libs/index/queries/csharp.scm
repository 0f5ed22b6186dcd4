; C#: namespaces (block ones scope what they hold; a file-scoped one names the file's
; package), classes, structs, records, interfaces and enums with their bases, methods,
; constructors, properties, constants; xUnit/NUnit/MSTest test methods by attribute; calls
; by name and on an object, and `new T(...)`; `using` directives.

(namespace_declaration name: (_) @name) @definition.namespace
(file_scoped_namespace_declaration name: (_) @name) @package

(class_declaration name: (identifier) @name) @definition.class
(class_declaration name: (identifier) @name (base_list [(identifier) (generic_name) (qualified_name)] @base)) @definition.class
(struct_declaration name: (identifier) @name) @definition.class
(struct_declaration name: (identifier) @name (base_list [(identifier) (generic_name) (qualified_name)] @base)) @definition.class
(record_declaration name: (identifier) @name) @definition.class
(interface_declaration name: (identifier) @name) @definition.interface
(interface_declaration name: (identifier) @name (base_list [(identifier) (generic_name) (qualified_name)] @base)) @definition.interface
(enum_declaration name: (identifier) @name) @definition.type

(method_declaration name: (identifier) @name) @definition.method
(constructor_declaration name: (identifier) @name) @definition.method
(local_function_statement name: (identifier) @name) @definition.function
(property_declaration name: (identifier) @name) @definition.method
(field_declaration (modifier) @_const (variable_declaration (variable_declarator name: (identifier) @name)) (#eq? @_const "const")) @definition.constant

(invocation_expression function: (identifier) @name) @reference.call
(invocation_expression function: (generic_name (identifier) @name)) @reference.call
(invocation_expression function: (member_access_expression expression: (_) @receiver name: (identifier) @name)) @reference.call
(invocation_expression function: (member_access_expression expression: (_) @receiver name: (generic_name (identifier) @name))) @reference.call
(object_creation_expression type: [(identifier) (qualified_name)] @name) @reference.call
(object_creation_expression type: (generic_name (identifier) @name)) @reference.call

(using_directive [(identifier) (qualified_name)] @import.path) @import
