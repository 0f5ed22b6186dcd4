; C: functions (static ones too), structs, unions and enums with a body, typedefs,
; object-like macros as constants; calls by name and through a struct's field; includes.

(function_definition
  declarator: [
    (function_declarator declarator: (identifier) @name)
    (pointer_declarator declarator: (function_declarator declarator: (identifier) @name))
    (pointer_declarator declarator: (pointer_declarator declarator: (function_declarator declarator: (identifier) @name)))
  ]) @definition.function

(struct_specifier name: (type_identifier) @name body: (_)) @definition.type
(union_specifier name: (type_identifier) @name body: (_)) @definition.type
(enum_specifier name: (type_identifier) @name body: (_)) @definition.type
(type_definition declarator: (type_identifier) @name) @definition.type
(type_definition declarator: (function_declarator declarator: (parenthesized_declarator (pointer_declarator declarator: (type_identifier) @name)))) @definition.type

(preproc_def name: (identifier) @name value: (_)) @definition.constant

(call_expression function: (identifier) @name) @reference.call
(call_expression function: (field_expression argument: (_) @receiver field: (field_identifier) @name)) @reference.call

(preproc_include path: (_) @import.path) @import
