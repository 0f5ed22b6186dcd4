//! The part of the SCIP schema (github.com/sourcegraph/scip, `scip.proto`) the oracle
//! benchmark reads, as prost messages with the schema's field numbers. Unknown fields
//! (documentation, diagnostics, signatures) are skipped by the decoder.

/// A whole index: one document per source file.
#[derive(Clone, PartialEq, prost::Message)]
pub struct Index {
    #[prost(message, optional, tag = "1")]
    pub metadata: Option<Metadata>,
    #[prost(message, repeated, tag = "2")]
    pub documents: Vec<Document>,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct Metadata {
    #[prost(message, optional, tag = "2")]
    pub tool_info: Option<ToolInfo>,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct ToolInfo {
    #[prost(string, tag = "1")]
    pub name: String,
    #[prost(string, tag = "2")]
    pub version: String,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct Document {
    /// Relative to the project root, `/`-separated.
    #[prost(string, tag = "1")]
    pub relative_path: String,
    #[prost(message, repeated, tag = "2")]
    pub occurrences: Vec<Occurrence>,
    #[prost(string, tag = "4")]
    pub language: String,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct Occurrence {
    /// `[start_line, start_char, end_char]` or `[start_line, start_char, end_line,
    /// end_char]`, 0-based.
    #[prost(int32, repeated, tag = "1")]
    pub range: Vec<i32>,
    #[prost(string, tag = "2")]
    pub symbol: String,
    /// Bit set of [`role`] values.
    #[prost(int32, tag = "3")]
    pub symbol_roles: i32,
}

/// `SymbolRole` bits.
pub mod role {
    pub const DEFINITION: i32 = 1;
    pub const IMPORT: i32 = 2;
}

impl Occurrence {
    /// The 1-based line the occurrence starts on.
    pub fn line(&self) -> u32 {
        self.range.first().map_or(0, |l| (*l).max(0) as u32 + 1)
    }

    pub fn is_definition(&self) -> bool {
        self.symbol_roles & role::DEFINITION != 0
    }

    pub fn is_import(&self) -> bool {
        self.symbol_roles & role::IMPORT != 0
    }
}

/// The package name of a global symbol (its third field), `None` for locals.
pub fn package(symbol: &str) -> Option<&str> {
    if symbol.starts_with("local ") {
        return None;
    }
    symbol.split(' ').nth(2)
}

/// The name of a symbol's last descriptor.
pub fn last_name(descriptors: &[Descriptor]) -> Option<&str> {
    descriptors.last().map(|d| match d {
        Descriptor::Namespace(n)
        | Descriptor::Type(n)
        | Descriptor::Term(n)
        | Descriptor::Method(n)
        | Descriptor::Parameter(n)
        | Descriptor::TypeParameter(n)
        | Descriptor::Meta(n) => n.as_str(),
    })
}

/// One descriptor of a symbol's path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Descriptor {
    /// `name/`: a package or module.
    Namespace(String),
    /// `name#`: a class, struct, interface, trait, enum or type alias.
    Type(String),
    /// `name.`: a variable, constant or field.
    Term(String),
    /// `name(disambiguator).`: a function or method.
    Method(String),
    /// `(name)`.
    Parameter(String),
    /// `[name]`.
    TypeParameter(String),
    /// `name:` (scip-typescript's synthetic object-literal symbols) or `name!` (a macro).
    Meta(String),
}

/// A parsed global symbol: its descriptors, outermost first. `None` for local symbols and
/// text that is not a SCIP symbol.
pub fn descriptors(symbol: &str) -> Option<Vec<Descriptor>> {
    if symbol.starts_with("local ") {
        return None;
    }
    // scheme, manager, package name, version: four space-separated fields (a space inside
    // one is written as two).
    let mut rest = symbol;
    for _ in 0..4 {
        let mut at = 0;
        let bytes = rest.as_bytes();
        loop {
            let next = rest[at..].find(' ')? + at;
            if bytes.get(next + 1) == Some(&b' ') {
                at = next + 2;
                continue;
            }
            rest = &rest[next + 1..];
            break;
        }
    }
    let mut out = Vec::new();
    let mut chars = rest.chars().peekable();
    let name = |chars: &mut std::iter::Peekable<std::str::Chars<'_>>| -> Option<String> {
        let mut name = String::new();
        if chars.peek() == Some(&'`') {
            chars.next();
            loop {
                match chars.next()? {
                    '`' if chars.peek() == Some(&'`') => {
                        chars.next();
                        name.push('`');
                    }
                    '`' => break,
                    c => name.push(c),
                }
            }
        } else {
            while let Some(&c) = chars.peek() {
                if c.is_alphanumeric() || matches!(c, '_' | '+' | '-' | '$') {
                    name.push(c);
                    chars.next();
                } else {
                    break;
                }
            }
        }
        Some(name)
    };
    while chars.peek().is_some() {
        match chars.peek() {
            Some('(') => {
                chars.next();
                let n = name(&mut chars)?;
                (chars.next()? == ')').then_some(())?;
                out.push(Descriptor::Parameter(n));
                continue;
            }
            Some('[') => {
                chars.next();
                let n = name(&mut chars)?;
                (chars.next()? == ']').then_some(())?;
                out.push(Descriptor::TypeParameter(n));
                continue;
            }
            _ => {}
        }
        let n = name(&mut chars)?;
        match chars.next()? {
            '/' => out.push(Descriptor::Namespace(n)),
            '#' => out.push(Descriptor::Type(n)),
            '.' => out.push(Descriptor::Term(n)),
            ':' | '!' => out.push(Descriptor::Meta(n)),
            '(' => {
                for c in chars.by_ref() {
                    if c == ')' {
                        break;
                    }
                }
                (chars.next()? == '.').then_some(())?;
                out.push(Descriptor::Method(n));
            }
            _ => return None,
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_go_python_and_typescript_symbols() {
        let go = descriptors(
            "scip-go gomod github.com/gin-gonic/gin v1.10.0 `github.com/gin-gonic/gin`/Engine#ServeHTTP().",
        )
        .unwrap();
        assert_eq!(
            go,
            vec![
                Descriptor::Namespace("github.com/gin-gonic/gin".into()),
                Descriptor::Type("Engine".into()),
                Descriptor::Method("ServeHTTP".into()),
            ]
        );
        let py = descriptors("scip-python python requests 2.32.3 `requests.api`/get().(params)")
            .unwrap();
        assert_eq!(py.last(), Some(&Descriptor::Parameter("params".into())));
        let ts =
            descriptors("scip-typescript npm express 4.21.0 lib/`router`/proto.route().").unwrap();
        assert_eq!(ts[1], Descriptor::Namespace("router".into()));
        assert_eq!(ts[3], Descriptor::Method("route".into()));
        let term = descriptors("scip-go gomod m v1 `m`/ErrX.").unwrap();
        assert_eq!(term[1], Descriptor::Term("ErrX".into()));
        let generic = descriptors("scip-go gomod m v1 `m`/Map#[K]").unwrap();
        assert_eq!(generic[2], Descriptor::TypeParameter("K".into()));
        let escaped = descriptors("a b c d `we``ird`#").unwrap();
        assert_eq!(escaped, vec![Descriptor::Type("we`ird".into())]);
        assert_eq!(descriptors("local 7"), None);
        assert_eq!(descriptors("a b c d x?"), None);
    }
}
