//! What one file contributes before resolution. Facts are cached per file (keyed by
//! content hash) so an incremental run re-parses only changed files and still resolves
//! calls across the whole repository.

/// Everything extracted from one file.
#[derive(Clone, PartialEq, prost::Message)]
pub struct FileFacts {
    #[prost(string, tag = "1")]
    pub path: String,
    #[prost(string, tag = "2")]
    pub language: String,
    #[prost(string, tag = "3")]
    pub content_hash: String,
    #[prost(uint64, tag = "4")]
    pub size: u64,
    #[prost(uint32, tag = "5")]
    pub lines: u32,
    /// Prefix of this file's top-level symbols' qualified names (Go import path, Python
    /// module, Rust module path, Java package, JS/TS module path).
    #[prost(string, tag = "6")]
    pub module: String,
    /// Qualified name of the package node the file belongs to; empty for none.
    #[prost(string, tag = "7")]
    pub package: String,
    #[prost(message, repeated, tag = "8")]
    pub imports: Vec<ImportFact>,
    #[prost(message, repeated, tag = "9")]
    pub symbols: Vec<SymbolFact>,
    #[prost(message, repeated, tag = "10")]
    pub calls: Vec<CallFact>,
    #[prost(message, repeated, tag = "11")]
    pub bindings: Vec<BindingFact>,
    #[prost(message, repeated, tag = "12")]
    pub references: Vec<ReferenceFact>,
    #[prost(message, repeated, tag = "13")]
    pub errors: Vec<ErrorFact>,
    #[prost(message, repeated, tag = "14")]
    pub sections: Vec<SectionFact>,
    #[prost(message, repeated, tag = "15")]
    pub dependencies: Vec<DependencyFact>,
    /// Why the file was not parsed (too large, not UTF-8, ...); empty when it was.
    #[prost(string, tag = "16")]
    pub skipped: String,
    #[prost(message, repeated, tag = "17")]
    pub impls: Vec<ImplFact>,
    /// The version of the extractor that wrote these facts
    /// ([`crate::lang::extractor_version`]): a file whose language's extractor changed
    /// since is parsed again, even when its content did not change.
    #[prost(string, tag = "18")]
    pub extractor: String,
    /// An include rule of the policy named the file when it was read (default skips,
    /// such as a generated header, did not apply): reused only while that still holds.
    #[prost(bool, tag = "19")]
    pub included: bool,
}

/// `impl Trait for Type` (Rust): the type implements the trait.
#[derive(Clone, PartialEq, prost::Message)]
pub struct ImplFact {
    #[prost(string, tag = "1")]
    pub type_name: String,
    #[prost(string, tag = "2")]
    pub trait_name: String,
    #[prost(uint32, tag = "3")]
    pub line: u32,
}

/// `import x as y`, `from m import n`, `use a::b`, `import "net/http"`.
/// The alias of an import that re-exports a whole module (JS/TS `export * from './m'`);
/// its `module` is `m` and its `exported_as` the re-exporting module.
pub const STAR_IMPORT: &str = "*";

#[derive(Clone, PartialEq, prost::Message)]
pub struct ImportFact {
    /// Qualified name the alias stands for (a module, or a symbol in one).
    #[prost(string, tag = "1")]
    pub target: String,
    /// The local name it is bound to.
    #[prost(string, tag = "2")]
    pub alias: String,
    #[prost(uint32, tag = "3")]
    pub line: u32,
    /// The module part of `target` (for IMPORTS edges).
    #[prost(string, tag = "4")]
    pub module: String,
    /// For a re-export (Rust `pub use`, an import in a Python package's `__init__`): the
    /// public path it gives the target (`itertools::traits::IteratorIndex`).
    #[prost(string, tag = "5")]
    pub exported_as: String,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct SymbolFact {
    /// A `NodeKind` as text.
    #[prost(string, tag = "1")]
    pub kind: String,
    #[prost(string, tag = "2")]
    pub name: String,
    #[prost(string, tag = "3")]
    pub qualified_name: String,
    #[prost(string, tag = "4")]
    pub signature: String,
    #[prost(uint32, tag = "5")]
    pub start_line: u32,
    #[prost(uint32, tag = "6")]
    pub end_line: u32,
    #[prost(string, tag = "7")]
    pub summary: String,
    #[prost(string, tag = "8")]
    pub fingerprint: String,
    /// Index of the enclosing symbol; -1 for top level.
    #[prost(int32, tag = "9")]
    pub parent: i32,
    /// For methods: the qualified name of their type (Go receiver, class, impl type).
    #[prost(string, tag = "10")]
    pub owner_type: String,
    /// Base types, implemented interfaces or traits, as written.
    #[prost(string, repeated, tag = "11")]
    pub bases: Vec<String>,
    #[prost(bool, tag = "12")]
    pub test: bool,
    /// For interfaces and traits: the method names they require.
    #[prost(string, repeated, tag = "13")]
    pub required_methods: Vec<String>,
    /// Distinguishes symbols with the same qualified name (overloads).
    #[prost(string, tag = "14")]
    pub discriminator: String,
    /// Interfaces embedded in an interface (Go), as written.
    #[prost(string, repeated, tag = "15")]
    pub embedded: Vec<String>,
    /// The documentation's prose on one line, redacted (`lang/doc.rs`): matched by
    /// retrieval, never shown.
    #[prost(string, tag = "16")]
    pub doc: String,
}

/// A call site. `receiver` is empty for a plain call, `self` for the method's own
/// receiver (`self`, `this`, a Go receiver variable), otherwise the receiver text.
#[derive(Clone, PartialEq, prost::Message)]
pub struct CallFact {
    #[prost(int32, tag = "1")]
    pub caller: i32,
    #[prost(string, tag = "2")]
    pub name: String,
    #[prost(string, tag = "3")]
    pub receiver: String,
    #[prost(uint32, tag = "4")]
    pub line: u32,
    /// Number of arguments (to choose among overloads).
    #[prost(uint32, tag = "5")]
    pub arguments: u32,
}

/// A variable whose type is known in a scope: `x := &T{}`, `x: T`, `T x = ...`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct BindingFact {
    #[prost(int32, tag = "1")]
    pub scope: i32,
    #[prost(string, tag = "2")]
    pub variable: String,
    #[prost(string, tag = "3")]
    pub type_name: String,
}

/// A name a symbol uses: read, written, passed or named as a type, called or not
/// (resolution drops what is already a call). Locals and parameters are left out.
#[derive(Clone, PartialEq, prost::Message)]
pub struct ReferenceFact {
    #[prost(int32, tag = "1")]
    pub from: i32,
    #[prost(string, tag = "2")]
    pub name: String,
    #[prost(uint32, tag = "3")]
    pub line: u32,
    /// `pkg` in `pkg.Name`, `self` in `self.x`; empty for a bare name.
    #[prost(string, tag = "4")]
    pub receiver: String,
}

/// A string literal (8+ characters, split at interpolations): one passed to an error
/// constructor, panic, raise or throw (`raised`), or any other.
#[derive(Clone, PartialEq, prost::Message)]
pub struct ErrorFact {
    #[prost(int32, tag = "1")]
    pub enclosing: i32,
    #[prost(string, tag = "2")]
    pub message: String,
    #[prost(uint32, tag = "3")]
    pub line: u32,
    /// Raised (an error's message) rather than only written.
    #[prost(bool, tag = "4")]
    pub raised: bool,
    /// The source line it is on (trimmed, redacted): how the message is built.
    #[prost(string, tag = "5")]
    pub context: String,
    /// Outside any symbol: the first line of the top-level statement holding it.
    #[prost(string, tag = "6")]
    pub statement: String,
}

/// A Markdown section.
#[derive(Clone, PartialEq, prost::Message)]
pub struct SectionFact {
    #[prost(string, tag = "1")]
    pub heading: String,
    #[prost(uint32, tag = "2")]
    pub level: u32,
    #[prost(uint32, tag = "3")]
    pub start_line: u32,
    #[prost(uint32, tag = "4")]
    pub end_line: u32,
    /// Code spans that may name symbols.
    #[prost(string, repeated, tag = "5")]
    pub mentions: Vec<String>,
    #[prost(string, tag = "6")]
    pub fingerprint: String,
}

/// A dependency declared in a manifest.
#[derive(Clone, PartialEq, prost::Message)]
pub struct DependencyFact {
    #[prost(string, tag = "1")]
    pub name: String,
    #[prost(string, tag = "2")]
    pub version: String,
    /// go, cargo, npm, pypi.
    #[prost(string, tag = "3")]
    pub ecosystem: String,
}
