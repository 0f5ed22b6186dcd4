; PHP: the file's namespace (`App\Billing`), classes, interfaces, traits and enums with
; what they extend and implement, methods (`App\Billing\Mailer::send`), functions,
; constants; PHPUnit `test*` methods in `*Test.php`; calls of functions, methods
; (`$this->deliver()`), static methods (`Mailer::make()`) and `new T`; `use` imports.

(namespace_definition name: (namespace_name) @name) @package

(class_declaration name: (name) @name) @definition.class
(class_declaration name: (name) @name (base_clause [(name) (qualified_name)] @base)) @definition.class
(class_declaration name: (name) @name (class_interface_clause [(name) (qualified_name)] @base)) @definition.class
(interface_declaration name: (name) @name) @definition.interface
(interface_declaration name: (name) @name (base_clause [(name) (qualified_name)] @base)) @definition.interface
(trait_declaration name: (name) @name) @definition.class
(enum_declaration name: (name) @name) @definition.type

(method_declaration name: (name) @name) @definition.method
(function_definition name: (name) @name) @definition.function
(const_declaration (const_element (name) @name)) @definition.constant

(function_call_expression function: [(name) (qualified_name)] @name) @reference.call
(member_call_expression object: (_) @receiver name: (name) @name) @reference.call
(nullsafe_member_call_expression object: (_) @receiver name: (name) @name) @reference.call
(scoped_call_expression scope: (_) @receiver name: (name) @name) @reference.call
(object_creation_expression [(name) (qualified_name)] @name) @reference.call

(namespace_use_clause [(name) (qualified_name)] @import.path) @import
