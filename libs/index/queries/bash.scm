; Bash: functions (`f() {}` and `function f {}`), readonly and exported constants;
; commands that name a function are calls (a command naming a program is recorded too,
; unresolved); `source` and `.` are imports. shunit2 `test*` functions in test files are
; tests.

(function_definition name: (word) @name) @definition.function
(declaration_command (variable_assignment name: (variable_name) @name)) @definition.constant

(command name: (command_name (word) @name) (#not-any-of? @name "source" "." "echo" "printf" "cd" "set" "export" "local" "return" "exit" "shift" "test" "[" "read" "eval" "exec" "true" "false")) @reference.call

(command name: (command_name (word) @_source) argument: [(word) (string) (raw_string)] @import.path (#any-of? @_source "source" ".")) @import
