//! The languages read through query files (`tags.rs`): each a grammar from crates.io,
//! compiled in, and `libs/index/queries/<name>.scm`. Adding one is a row here, a query
//! file, a golden fixture, and a line in docs/indexing.md's depth table.

use std::sync::OnceLock;

use tree_sitter::Query;

use super::tags::Spec;

/// A language read through its query file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Tagged {
    C,
    Cpp,
    CSharp,
    Ruby,
    Php,
    Kotlin,
    Swift,
    Scala,
    Bash,
    Lua,
    Elixir,
    Dart,
    Protobuf,
    Zig,
}

/// Doc comment markers of the C family, longest first.
const C_COMMENTS: &[&str] = &["///", "//!", "//", "/**", "/*!", "/*"];
const C_STRINGS: &[&str] = &["string_literal", "raw_string_literal"];

static C: Spec = Spec {
    name: "c",
    extensions: &["c", "h"],
    grammar: || tree_sitter_c::LANGUAGE.into(),
    query: include_str!("../../queries/c.scm"),
    scope_separator: "::",
    member_separator: "::",
    instance_method_separator: None,
    comment_prefixes: C_COMMENTS,
    string_kinds: C_STRINGS,
    self_receivers: &[],
    import_binds_last: false,
    imports_open_scope: false,
    implicit_self: false,
    test_prefixes: &["test_", "test"],
    test_markers: &[],
    test_file_suffixes: &["_test.c", "_tests.c"],
};

static CPP: Spec = Spec {
    name: "cpp",
    extensions: &[
        "cc", "cpp", "cxx", "c++", "hh", "hpp", "hxx", "h++", "ipp", "tpp",
    ],
    grammar: || tree_sitter_cpp::LANGUAGE.into(),
    query: include_str!("../../queries/cpp.scm"),
    scope_separator: "::",
    member_separator: "::",
    instance_method_separator: None,
    comment_prefixes: C_COMMENTS,
    string_kinds: C_STRINGS,
    self_receivers: &["this"],
    import_binds_last: false,
    imports_open_scope: false,
    implicit_self: true,
    test_prefixes: &["test_"],
    test_markers: &[],
    test_file_suffixes: &["_test.cc", "_test.cpp", "_unittest.cc", "_unittest.cpp"],
};

static CSHARP: Spec = Spec {
    name: "csharp",
    extensions: &["cs"],
    grammar: || tree_sitter_c_sharp::LANGUAGE.into(),
    query: include_str!("../../queries/csharp.scm"),
    scope_separator: ".",
    member_separator: ".",
    instance_method_separator: None,
    comment_prefixes: &["///", "//", "/**", "/*"],
    string_kinds: &[
        "string_literal",
        "verbatim_string_literal",
        "raw_string_literal",
        "interpolated_string_expression",
    ],
    self_receivers: &["this"],
    import_binds_last: true,
    imports_open_scope: true,
    implicit_self: true,
    test_prefixes: &[],
    test_markers: &[
        "Test",
        "Fact",
        "Theory",
        "TestMethod",
        "DataTestMethod",
        "TestCase",
    ],
    test_file_suffixes: &["Tests.cs", "Test.cs"],
};

static RUBY: Spec = Spec {
    name: "ruby",
    extensions: &["rb", "rake", "gemspec"],
    grammar: || tree_sitter_ruby::LANGUAGE.into(),
    query: include_str!("../../queries/ruby.scm"),
    scope_separator: "::",
    member_separator: "::",
    instance_method_separator: Some("#"),
    comment_prefixes: &["#"],
    string_kinds: &["string"],
    self_receivers: &["self"],
    import_binds_last: false,
    imports_open_scope: false,
    implicit_self: true,
    test_prefixes: &["test_"],
    test_markers: &[],
    test_file_suffixes: &["_test.rb", "_spec.rb"],
};

static PHP: Spec = Spec {
    name: "php",
    extensions: &["php"],
    grammar: || tree_sitter_php::LANGUAGE_PHP.into(),
    query: include_str!("../../queries/php.scm"),
    scope_separator: "\\",
    member_separator: "::",
    instance_method_separator: None,
    comment_prefixes: &["/**", "/*", "//", "#"],
    string_kinds: &["string", "encapsed_string"],
    self_receivers: &["$this", "self", "static"],
    import_binds_last: true,
    imports_open_scope: false,
    implicit_self: false,
    test_prefixes: &["test"],
    test_markers: &["Test"],
    test_file_suffixes: &["Test.php"],
};

static KOTLIN: Spec = Spec {
    name: "kotlin",
    extensions: &["kt", "kts"],
    grammar: || tree_sitter_kotlin_ng::LANGUAGE.into(),
    query: include_str!("../../queries/kotlin.scm"),
    scope_separator: ".",
    member_separator: ".",
    instance_method_separator: None,
    comment_prefixes: &["/**", "/*", "//"],
    string_kinds: &["string_literal"],
    self_receivers: &["this"],
    import_binds_last: true,
    imports_open_scope: false,
    implicit_self: true,
    test_prefixes: &[],
    test_markers: &["Test", "ParameterizedTest"],
    test_file_suffixes: &["Test.kt", "Tests.kt"],
};

static SWIFT: Spec = Spec {
    name: "swift",
    extensions: &["swift"],
    grammar: || tree_sitter_swift::LANGUAGE.into(),
    query: include_str!("../../queries/swift.scm"),
    scope_separator: ".",
    member_separator: ".",
    instance_method_separator: None,
    comment_prefixes: &["///", "//", "/**", "/*"],
    string_kinds: &["line_string_literal", "multi_line_string_literal"],
    self_receivers: &["self"],
    import_binds_last: true,
    imports_open_scope: true,
    implicit_self: true,
    test_prefixes: &["test"],
    test_markers: &["Test"],
    test_file_suffixes: &["Tests.swift", "Test.swift"],
};

static SCALA: Spec = Spec {
    name: "scala",
    extensions: &["scala", "sc"],
    grammar: || tree_sitter_scala::LANGUAGE.into(),
    query: include_str!("../../queries/scala.scm"),
    scope_separator: ".",
    member_separator: ".",
    instance_method_separator: None,
    comment_prefixes: &["/**", "/*", "//"],
    string_kinds: &["string"],
    self_receivers: &["this"],
    import_binds_last: true,
    imports_open_scope: true,
    implicit_self: true,
    test_prefixes: &[],
    test_markers: &["Test"],
    test_file_suffixes: &["Spec.scala", "Test.scala", "Suite.scala"],
};

static BASH: Spec = Spec {
    name: "bash",
    extensions: &["sh", "bash"],
    grammar: || tree_sitter_bash::LANGUAGE.into(),
    query: include_str!("../../queries/bash.scm"),
    scope_separator: ".",
    member_separator: ".",
    instance_method_separator: None,
    comment_prefixes: &["#"],
    string_kinds: &["string", "raw_string"],
    self_receivers: &[],
    import_binds_last: false,
    imports_open_scope: false,
    implicit_self: false,
    test_prefixes: &["test"],
    test_markers: &[],
    test_file_suffixes: &["_test.sh", "_tests.sh"],
};

static LUA: Spec = Spec {
    name: "lua",
    extensions: &["lua"],
    grammar: || tree_sitter_lua::LANGUAGE.into(),
    query: include_str!("../../queries/lua.scm"),
    scope_separator: ".",
    member_separator: ".",
    instance_method_separator: None,
    comment_prefixes: &["---", "--"],
    string_kinds: &["string"],
    self_receivers: &["self"],
    import_binds_last: false,
    imports_open_scope: false,
    implicit_self: false,
    test_prefixes: &["test"],
    test_markers: &[],
    test_file_suffixes: &["_spec.lua", "_test.lua"],
};

static ELIXIR: Spec = Spec {
    name: "elixir",
    extensions: &["ex", "exs"],
    grammar: || tree_sitter_elixir::LANGUAGE.into(),
    query: include_str!("../../queries/elixir.scm"),
    scope_separator: ".",
    member_separator: ".",
    instance_method_separator: None,
    comment_prefixes: &["#"],
    string_kinds: &["string"],
    self_receivers: &[],
    import_binds_last: true,
    imports_open_scope: true,
    implicit_self: true,
    test_prefixes: &[],
    test_markers: &[],
    test_file_suffixes: &["_test.exs"],
};

static DART: Spec = Spec {
    name: "dart",
    extensions: &["dart"],
    grammar: || tree_sitter_dart::LANGUAGE.into(),
    query: include_str!("../../queries/dart.scm"),
    scope_separator: ".",
    member_separator: ".",
    instance_method_separator: None,
    comment_prefixes: &["///", "//", "/**", "/*"],
    string_kinds: &["string_literal"],
    self_receivers: &["this"],
    import_binds_last: false,
    imports_open_scope: true,
    implicit_self: true,
    test_prefixes: &[],
    test_markers: &[],
    test_file_suffixes: &["_test.dart"],
};

static PROTOBUF: Spec = Spec {
    name: "protobuf",
    extensions: &["proto"],
    grammar: || tree_sitter_proto::LANGUAGE.into(),
    query: include_str!("../../queries/proto.scm"),
    scope_separator: ".",
    member_separator: ".",
    instance_method_separator: None,
    comment_prefixes: &["//", "/**", "/*"],
    string_kinds: &[],
    self_receivers: &[],
    import_binds_last: false,
    imports_open_scope: false,
    implicit_self: false,
    test_prefixes: &[],
    test_markers: &[],
    test_file_suffixes: &[],
};

static ZIG: Spec = Spec {
    name: "zig",
    extensions: &["zig"],
    grammar: || tree_sitter_zig::LANGUAGE.into(),
    query: include_str!("../../queries/zig.scm"),
    scope_separator: ".",
    member_separator: ".",
    instance_method_separator: None,
    comment_prefixes: &["///", "//!", "//"],
    string_kinds: &["string", "multiline_string"],
    self_receivers: &["self"],
    import_binds_last: false,
    imports_open_scope: false,
    implicit_self: false,
    test_prefixes: &[],
    test_markers: &[],
    test_file_suffixes: &[],
};

impl Tagged {
    pub const ALL: [Tagged; 14] = [
        Tagged::C,
        Tagged::Cpp,
        Tagged::CSharp,
        Tagged::Ruby,
        Tagged::Php,
        Tagged::Kotlin,
        Tagged::Swift,
        Tagged::Scala,
        Tagged::Bash,
        Tagged::Lua,
        Tagged::Elixir,
        Tagged::Dart,
        Tagged::Protobuf,
        Tagged::Zig,
    ];

    pub fn spec(self) -> &'static Spec {
        match self {
            Tagged::C => &C,
            Tagged::Cpp => &CPP,
            Tagged::CSharp => &CSHARP,
            Tagged::Ruby => &RUBY,
            Tagged::Php => &PHP,
            Tagged::Kotlin => &KOTLIN,
            Tagged::Swift => &SWIFT,
            Tagged::Scala => &SCALA,
            Tagged::Bash => &BASH,
            Tagged::Lua => &LUA,
            Tagged::Elixir => &ELIXIR,
            Tagged::Dart => &DART,
            Tagged::Protobuf => &PROTOBUF,
            Tagged::Zig => &ZIG,
        }
    }

    /// The compiled query, built on first use.
    pub fn query(self) -> &'static Query {
        static SLOTS: [OnceLock<Query>; Tagged::ALL.len()] =
            [const { OnceLock::new() }; Tagged::ALL.len()];
        super::tags::query(self.spec(), &SLOTS[self as usize])
    }

    /// The language of this graph name (`Node::language`).
    pub fn by_name(name: &str) -> Option<Tagged> {
        Tagged::ALL.into_iter().find(|t| t.spec().name == name)
    }

    /// Whether methods of the language call their type's other methods without naming
    /// the receiver.
    pub fn implicit_self(name: &str) -> bool {
        Tagged::by_name(name).is_some_and(|t| t.spec().implicit_self)
    }

    /// Whether an import puts every name of what it imports in scope (C# `using`).
    pub fn imports_open_scope(name: &str) -> bool {
        Tagged::by_name(name).is_some_and(|t| t.spec().imports_open_scope)
    }

    pub fn from_extension(extension: &str) -> Option<Tagged> {
        Tagged::ALL
            .into_iter()
            .find(|t| t.spec().extensions.contains(&extension))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_query_compiles_against_its_grammar() {
        for language in Tagged::ALL {
            let query = language.query();
            assert!(query.pattern_count() > 0, "{}", language.spec().name);
            let mut parser = tree_sitter::Parser::new();
            parser
                .set_language(&(language.spec().grammar)())
                .unwrap_or_else(|e| panic!("{}: {e}", language.spec().name));
        }
    }

    #[test]
    fn extensions_are_unique() {
        let mut seen = std::collections::HashSet::new();
        for language in Tagged::ALL {
            for extension in language.spec().extensions {
                assert!(seen.insert(*extension), "{extension} twice");
            }
        }
    }
}
