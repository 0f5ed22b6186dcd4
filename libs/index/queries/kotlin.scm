; Kotlin: the file's package, classes, interfaces, objects (a companion object's members
; are its class's), functions and methods, extension functions (`Order.isRecent`, a
; method of the type they extend), constants; JUnit `@Test` functions; calls by name,
; on a receiver, and constructor calls; imports.

(package_header (qualified_identifier) @name) @package

(class_declaration "interface" name: (identifier) @name) @definition.interface
(class_declaration "interface" name: (identifier) @name (delegation_specifiers (delegation_specifier [(user_type) (constructor_invocation (user_type))] @base))) @definition.interface
(class_declaration name: (identifier) @name) @definition.class
(class_declaration name: (identifier) @name (delegation_specifiers (delegation_specifier [(user_type) (constructor_invocation (user_type))] @base))) @definition.class
(object_declaration name: (identifier) @name) @definition.class

(function_declaration (user_type) @owner . name: (identifier) @name) @definition.function
(function_declaration name: (identifier) @name) @definition.function
(property_declaration (modifiers (property_modifier) @_const) (variable_declaration (identifier) @name) (#eq? @_const "const")) @definition.constant

(call_expression . (identifier) @name) @reference.call
(call_expression . (navigation_expression (_) @receiver . (identifier) @name .)) @reference.call

(import (qualified_identifier) @import.path) @import
