//! Tool arguments decoded into typed requests, checked against each tool's input schema
//! (unknown arguments, wrong types, missing required ones) before any backend is asked.
//! Every failure is a typed error naming the argument at fault.

use codectx_errors::Error;
use codectx_proto::assembler::v1 as pb;
use rmcp::model::JsonObject;
use serde_json::Value;

use crate::mcp::tools;

/// A decoded tool call: the repository selector (if any) and the typed request.
#[derive(Debug, Clone, PartialEq)]
pub struct Decoded {
    pub repository: Option<String>,
    pub request: ToolRequest,
}

/// One typed request per tool.
#[derive(Debug, Clone, PartialEq)]
pub enum ToolRequest {
    ListRepositories,
    DescribeRepository,
    MinimalContext(pb::MinimalContextRequest),
    Search(pb::SearchRequest),
    SymbolContext(pb::SymbolContextRequest),
    CallGraph(pb::CallGraphRequest),
    PrContext(pb::PrContextRequest),
    CodeSnippet(pb::CodeSnippetRequest),
    Recall(pb::RecallRequest),
    Remember(pb::RememberRequest),
    Forget(pb::ForgetRequest),
    /// The `compress` tool: answered by the gateway, no repository.
    Compress(CompressRequest),
    /// `get_compression_stats`: this session's compression state.
    CompressionStats,
}

/// The `compress` tool's arguments.
#[derive(Debug, Clone, PartialEq)]
pub struct CompressRequest {
    pub text: String,
    pub kind: Option<codectx_compress::ContentKind>,
    pub level: codectx_compress::Level,
}

/// The most text `compress` takes, in bytes (its schema says so).
pub const COMPRESS_TEXT_BYTES: usize = 256 * 1024;

/// Decodes `arguments` for the tool `name`.
pub fn decode(name: &str, arguments: JsonObject) -> Result<Decoded, Error> {
    let tool = tools().iter().find(|t| t.name == name).ok_or_else(|| {
        Error::invalid_argument("name", format!("no tool named {name:?}; see tools/list"))
    })?;
    crate::schema::validate(name, &tool.input_schema, &arguments)?;
    let arguments = Arguments(arguments);
    let repository = arguments.string("repository")?;
    // Read by the compression engine; checked here like every argument.
    for option in [
        codectx_compress::ledger::FRESH_ARGUMENT,
        codectx_compress::engine::DETAIL_ARGUMENT,
        codectx_compress::engine::FOR_EDIT_ARGUMENT,
    ] {
        arguments.boolean(option)?;
    }
    if let Some(level) = arguments.string(codectx_compress::engine::LEVEL_ARGUMENT)?
        && codectx_compress::LevelSetting::parse(&level).is_none()
    {
        return Err(Error::invalid_argument(
            codectx_compress::engine::LEVEL_ARGUMENT,
            format!(
                "compression is one of {}, not {:?}",
                codectx_compress::LevelSetting::NAMES.join(", "),
                level.chars().take(64).collect::<String>()
            ),
        ));
    }
    let request = match name {
        "compress" => {
            let text = arguments.required("text")?;
            codectx_core::limits::check_bytes("text", &text, COMPRESS_TEXT_BYTES)?;
            let kind = match arguments.string("kind")? {
                None => None,
                Some(kind) => {
                    Some(codectx_compress::ContentKind::parse(&kind).ok_or_else(|| {
                        Error::invalid_argument(
                            "kind",
                            format!(
                                "kind is one of {}, not {:?}",
                                codectx_compress::ContentKind::ALL
                                    .map(|k| k.as_str())
                                    .join(", "),
                                kind.chars().take(64).collect::<String>()
                            ),
                        )
                    })?)
                }
            };
            let level = match arguments.string("level")?.as_deref() {
                None | Some("summary") => codectx_compress::Level::Summary,
                Some("aggressive") => codectx_compress::Level::Aggressive,
                Some("minimal") => codectx_compress::Level::Minimal,
                Some(other) => {
                    return Err(Error::invalid_argument(
                        "level",
                        format!(
                            "level is summary, aggressive or minimal, not {:?}",
                            other.chars().take(64).collect::<String>()
                        ),
                    ));
                }
            };
            ToolRequest::Compress(CompressRequest { text, kind, level })
        }
        "get_compression_stats" => ToolRequest::CompressionStats,
        "list_repositories" => ToolRequest::ListRepositories,
        "describe_repository" => ToolRequest::DescribeRepository,
        "minimal_context" => ToolRequest::MinimalContext(pb::MinimalContextRequest {
            task: arguments.required("task")?,
            max_tokens: arguments.number("max_tokens")?,
        }),
        "search" => ToolRequest::Search(pb::SearchRequest {
            query: arguments.required("query")?,
            kinds: codectx_core::limits::normalize_kinds(
                arguments.strings("kinds")?.unwrap_or_default(),
            )?,
            limit: arguments.number("limit")?,
            ..Default::default()
        }),
        "get_symbol_context" => ToolRequest::SymbolContext(pb::SymbolContextRequest {
            symbol: arguments.required("symbol")?,
            max_tokens: arguments.number("max_tokens")?,
            include_ids: arguments.boolean("include_ids")?,
            ..Default::default()
        }),
        "get_call_graph" => {
            let direction = match arguments.string("direction")?.as_deref() {
                None | Some("both") => pb::CallDirection::Both,
                Some("callers") => pb::CallDirection::Callers,
                Some("callees") => pb::CallDirection::Callees,
                Some(other) => {
                    return Err(Error::invalid_argument(
                        "direction",
                        format!(
                            "direction is callers, callees or both, not {:?}",
                            other.chars().take(64).collect::<String>()
                        ),
                    ));
                }
            };
            ToolRequest::CallGraph(pb::CallGraphRequest {
                symbol: arguments.required("symbol")?,
                direction: direction as i32,
                depth: arguments.number("depth")?,
                max_tokens: arguments.number("max_tokens")?,
            })
        }
        "get_pr_context" => {
            let change = match (arguments.string("diff")?, arguments.strings("files")?) {
                (Some(diff), None) => pb::pr_context_request::Change::Diff(diff),
                (None, Some(paths)) => {
                    codectx_core::limits::check_count(
                        "files",
                        paths.len(),
                        codectx_core::limits::FILE_LIST_ENTRIES,
                        "files",
                    )?;
                    pb::pr_context_request::Change::Files(pb::PathList { paths })
                }
                _ => {
                    return Err(Error::invalid_argument(
                        "diff",
                        "pass either diff (a unified diff) or files (changed paths)",
                    ));
                }
            };
            ToolRequest::PrContext(pb::PrContextRequest {
                change: Some(change),
                max_tokens: arguments.number("max_tokens")?,
            })
        }
        "get_code_snippet" => {
            let target = match (arguments.string("symbol")?, arguments.string("id")?) {
                (Some(symbol), None) => pb::code_snippet_request::Target::Symbol(symbol),
                (None, Some(id)) => pb::code_snippet_request::Target::Id(id),
                _ => {
                    return Err(Error::invalid_argument(
                        "symbol",
                        "pass either symbol or id",
                    ));
                }
            };
            ToolRequest::CodeSnippet(pb::CodeSnippetRequest {
                target: Some(target),
                fingerprint: arguments.string("fingerprint")?.unwrap_or_default(),
            })
        }
        "recall" => ToolRequest::Recall(pb::RecallRequest {
            query: arguments.required("query")?,
            max_entries: arguments.number("max_entries")?,
            hops: arguments.number("hops")?,
        }),
        "remember" => ToolRequest::Remember(pb::RememberRequest {
            entity: arguments.required("entity")?,
            r#type: arguments.required("type")?,
            aliases: arguments.strings("aliases")?.unwrap_or_default(),
            facts: arguments.facts()?,
            source_client: "mcp".into(),
        }),
        "forget" => ToolRequest::Forget(pb::ForgetRequest {
            entity: arguments.required("entity")?,
        }),
        other => {
            return Err(Error::internal(format!(
                "tool {other} is listed but has no decoder"
            )));
        }
    };
    Ok(Decoded {
        repository,
        request,
    })
}

/// Arguments as a JSON object with typed accessors that fail with a field-named error.
pub struct Arguments(JsonObject);

impl Arguments {
    fn string(&self, name: &str) -> Result<Option<String>, Error> {
        match self.0.get(name) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.clone())),
            Some(_) => Err(Error::invalid_argument(
                name,
                format!("{name} must be a string"),
            )),
        }
    }

    fn required(&self, name: &str) -> Result<String, Error> {
        self.string(name)?
            .filter(|s| !s.trim().is_empty())
            .ok_or_else(|| Error::invalid_argument(name, format!("{name} is required")))
    }

    fn number(&self, name: &str) -> Result<u32, Error> {
        match self.0.get(name) {
            None | Some(Value::Null) => Ok(0),
            Some(Value::Number(n)) => {
                n.as_u64()
                    .and_then(|n| u32::try_from(n).ok())
                    .ok_or_else(|| {
                        Error::invalid_argument(
                            name,
                            format!("{name} must be a non-negative integer"),
                        )
                    })
            }
            Some(_) => Err(Error::invalid_argument(
                name,
                format!("{name} must be an integer"),
            )),
        }
    }

    fn boolean(&self, name: &str) -> Result<bool, Error> {
        match self.0.get(name) {
            None | Some(Value::Null) => Ok(false),
            Some(Value::Bool(b)) => Ok(*b),
            Some(_) => Err(Error::invalid_argument(
                name,
                format!("{name} must be true or false"),
            )),
        }
    }

    fn strings(&self, name: &str) -> Result<Option<Vec<String>>, Error> {
        match self.0.get(name) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::Array(items)) => items
                .iter()
                .map(|v| {
                    v.as_str().map(str::to_owned).ok_or_else(|| {
                        Error::invalid_argument(name, format!("{name} must be a list of strings"))
                    })
                })
                .collect::<Result<Vec<_>, _>>()
                .map(Some),
            Some(_) => Err(Error::invalid_argument(
                name,
                format!("{name} must be a list of strings"),
            )),
        }
    }

    /// The schema checked every fact's fields and types; a fact needs an object or a
    /// subject (`{"subject": "OrdersDB", "predicate": "writes_to"}` is about another
    /// entity, whose object is the one being remembered).
    fn facts(&self) -> Result<Vec<pb::FactInput>, Error> {
        let Some(Value::Array(items)) = self.0.get("facts") else {
            return Ok(Vec::new());
        };
        items
            .iter()
            .enumerate()
            .map(|(index, fact)| {
                let text = |key: &str| {
                    fact.get(key)
                        .and_then(Value::as_str)
                        .unwrap_or("")
                        .to_owned()
                };
                let (predicate, object, subject) = (text("predicate"), text("object"), text("subject"));
                if object.trim().is_empty() && subject.trim().is_empty() {
                    return Err(Error::invalid_argument(
                        &format!("facts[{index}].object"),
                        format!("facts[{index}] needs an object (or a subject: the entity the fact is about, when it is not this one)"),
                    ));
                }
                Ok(pb::FactInput {
                    predicate,
                    object,
                    subject,
                })
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use serde_json::json;

    fn object(value: Value) -> JsonObject {
        value.as_object().cloned().unwrap()
    }

    #[test]
    fn every_listed_tool_has_a_decoder() {
        for tool in tools() {
            let error = decode(&tool.name, JsonObject::new()).err();
            assert!(
                error.as_ref().is_none_or(|e| e.reason() != "internal"),
                "{}: {error:?}",
                tool.name
            );
        }
    }

    #[test]
    fn unknown_arguments_are_refused_with_the_field() {
        let error = decode(
            "remember",
            object(json!({"repository": "r", "entity": "e", "type": "t", "fact": [{"predicate": "p", "object": "o"}]})),
        )
        .unwrap_err();
        assert_eq!(error.field(), "fact");
        assert!(error.message().contains("facts"), "{}", error.message());
    }

    #[test]
    fn wrong_types_name_the_argument() {
        for (tool, arguments, field) in [
            ("search", json!({"query": 7}), "query"),
            ("search", json!({"query": "q", "limit": -1}), "limit"),
            (
                "search",
                json!({"query": "q", "kinds": "function"}),
                "kinds",
            ),
            ("recall", json!({"query": "q", "hops": "two"}), "hops"),
            (
                "get_pr_context",
                json!({"files": (0..101).map(|i| format!("f{i}")).collect::<Vec<_>>()}),
                "files",
            ),
            (
                "get_call_graph",
                json!({"symbol": "s", "direction": "up"}),
                "direction",
            ),
            (
                "get_symbol_context",
                json!({"symbol": "s", "compression": "max"}),
                "compression",
            ),
            ("search", json!({"query": "q", "detail": "yes"}), "detail"),
            ("compress", json!({"text": "x", "kind": "yaml"}), "kind"),
            ("compress", json!({"text": "x", "level": "off"}), "level"),
            (
                "compress",
                json!({"text": "x".repeat(COMPRESS_TEXT_BYTES + 1)}),
                "text",
            ),
        ] {
            let error = decode(tool, object(arguments)).unwrap_err();
            assert_eq!(error.field(), field, "{tool}: {error}");
        }
    }

    fn json_value() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::from),
            any::<i64>().prop_map(Value::from),
            any::<f64>()
                .prop_filter("finite", |f| f.is_finite())
                .prop_map(Value::from),
            "\\PC{0,40}".prop_map(Value::from),
        ];
        leaf.prop_recursive(3, 24, 6, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..6).prop_map(Value::from),
                prop::collection::hash_map("[a-z_]{1,12}", inner, 0..6)
                    .prop_map(|m| Value::Object(m.into_iter().collect())),
            ]
        })
    }

    fn argument_name() -> impl Strategy<Value = String> {
        prop_oneof![
            prop::sample::select(vec![
                "repository",
                "query",
                "kinds",
                "limit",
                "symbol",
                "max_tokens",
                "include_ids",
                "direction",
                "depth",
                "diff",
                "files",
                "task",
                "id",
                "fingerprint",
                "max_entries",
                "hops",
                "entity",
                "type",
                "aliases",
                "facts",
                "fresh",
                "detail",
                "for_edit",
                "compression",
                "text",
                "kind",
                "level",
            ])
            .prop_map(str::to_owned),
            "\\PC{1,16}",
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2_000))]

        /// Any arguments for any tool decode or fail with a typed error naming a field:
        /// never a panic, never an internal error.
        #[test]
        fn decoding_never_panics(
            tool in prop::sample::select(tools().iter().map(|t| t.name.to_string()).collect::<Vec<_>>()),
            arguments in prop::collection::vec((argument_name(), json_value()), 0..6),
        ) {
            let arguments: JsonObject = arguments.into_iter().collect();
            match decode(&tool, arguments) {
                Ok(_) => {}
                Err(error) => {
                    prop_assert_ne!(error.reason(), "internal");
                    prop_assert!(!error.field().is_empty(), "{}: {}", tool, error);
                }
            }
        }
    }
}
