; Swift: classes, actors, structs, enums and protocols with what they inherit or conform
; to, extensions (their members belong to the extended type), functions, methods and
; initializers; XCTest `test*` methods in test files; calls by name and on a receiver;
; imports.

(class_declaration ["class" "actor" "struct"] name: (type_identifier) @name) @definition.class
(class_declaration ["class" "actor" "struct"] name: (type_identifier) @name (inheritance_specifier inherits_from: (user_type) @base)) @definition.class
(class_declaration "enum" name: (type_identifier) @name) @definition.type
(class_declaration "enum" name: (type_identifier) @name (inheritance_specifier inherits_from: (user_type) @base)) @definition.type
(class_declaration "extension" name: (user_type) @name) @definition.extension
(protocol_declaration name: (type_identifier) @name) @definition.interface
(protocol_declaration name: (type_identifier) @name (inheritance_specifier inherits_from: (user_type) @base)) @definition.interface

(function_declaration name: (simple_identifier) @name) @definition.function
(protocol_function_declaration name: (simple_identifier) @name) @definition.method
(init_declaration "init" @name) @definition.method

(call_expression . (simple_identifier) @name) @reference.call
(call_expression . (navigation_expression target: (_) @receiver suffix: (navigation_suffix suffix: (simple_identifier) @name))) @reference.call

(import_declaration (identifier) @import.path) @import
