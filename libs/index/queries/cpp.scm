; C++: namespaces (scopes), classes and structs with their bases, functions and methods
; (in the class body or out of line as `Type::name`), enums, aliases, constexpr and
; macro constants; GoogleTest `TEST`/`TEST_F`/`TEST_P`/`TYPED_TEST` bodies as tests
; named `Suite.Name`; calls by name, through an object, qualified, and `new T`.

(namespace_definition name: (_) @name) @definition.namespace

(class_specifier name: (_) @name body: (_)) @definition.class
(class_specifier name: (_) @name (base_class_clause [(type_identifier) (qualified_identifier) (template_type)] @base) body: (_)) @definition.class
(struct_specifier name: (_) @name body: (_)) @definition.class
(struct_specifier name: (_) @name (base_class_clause [(type_identifier) (qualified_identifier) (template_type)] @base) body: (_)) @definition.class
(union_specifier name: (_) @name body: (_)) @definition.type
(enum_specifier name: (_) @name body: (_)) @definition.type
(alias_declaration name: (type_identifier) @name) @definition.type
(type_definition declarator: (type_identifier) @name) @definition.type

(function_definition
  declarator: (function_declarator
    declarator: (identifier) @_macro
    parameters: (parameter_list
      . (parameter_declaration type: (_) @test.suite)
      . (parameter_declaration type: (_) @name)))
  (#any-of? @_macro "TEST" "TEST_F" "TEST_P" "TYPED_TEST" "TYPED_TEST_P" "FRIEND_TEST")) @definition.test

(function_definition
  declarator: [
    (function_declarator declarator: [(identifier) (field_identifier) (qualified_identifier) (operator_name) (destructor_name)] @name)
    (pointer_declarator declarator: (function_declarator declarator: [(identifier) (field_identifier) (qualified_identifier)] @name))
    (reference_declarator (function_declarator declarator: [(identifier) (field_identifier) (qualified_identifier)] @name))
  ]) @definition.function

(preproc_def name: (identifier) @name value: (_)) @definition.constant
(declaration (type_qualifier) @_constexpr declarator: (init_declarator declarator: (identifier) @name) (#eq? @_constexpr "constexpr")) @definition.constant

(call_expression function: (identifier) @name) @reference.call
(call_expression function: (qualified_identifier) @name) @reference.call
(call_expression function: (template_function name: (identifier) @name)) @reference.call
(call_expression function: (field_expression argument: (_) @receiver field: (field_identifier) @name)) @reference.call
(new_expression type: [(type_identifier) (qualified_identifier)] @name) @reference.call

(preproc_include path: (_) @import.path) @import
