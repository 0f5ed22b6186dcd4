//! JSON: arrays become their item schema, a count and samples; objects their outline to
//! a depth. Every value that reports a problem (a key or string naming an error,
//! warning, failure, back-off, ...) is listed with its path at every level.

use serde_json::{Map, Value};

use super::is_signal;
use crate::level::Level;

struct Limits {
    samples: usize,
    depth: usize,
    string: usize,
    problems: usize,
}

pub(super) fn compress(text: &str, level: Level) -> String {
    let Ok(value) = serde_json::from_str::<Value>(text) else {
        return super::prose::compress(text, level);
    };
    let limits = match level {
        Level::Off => return text.to_owned(),
        Level::Summary => Limits {
            samples: 2,
            depth: 3,
            string: 80,
            problems: 50,
        },
        Level::Aggressive => Limits {
            samples: 1,
            depth: 2,
            string: 60,
            problems: 25,
        },
        Level::Minimal => Limits {
            samples: 0,
            depth: 1,
            string: 40,
            problems: 10,
        },
    };
    let mut out = Vec::new();
    match &value {
        Value::Array(items) => {
            out.push(format!(
                "array of {} {}",
                items.len(),
                describe_items(items)
            ));
            let fields = schema(items);
            if !fields.is_empty() {
                out.push(format!("fields: {}", fields.join(", ")));
            }
            let mut samples: Vec<usize> = Vec::new();
            if limits.samples >= 1 && !items.is_empty() {
                samples.push(0);
            }
            if limits.samples >= 2 && items.len() > 1 {
                samples.push(items.len() - 1);
            }
            for index in samples {
                out.push(format!("[{index}]:"));
                outline(&items[index], 1, &limits, &mut out);
            }
        }
        other => outline(other, 0, &limits, &mut out),
    }
    let mut problems = Vec::new();
    find_problems(&value, &mut String::new(), &mut problems);
    if !problems.is_empty() {
        let total = problems.len();
        out.push(format!("problems ({total}):"));
        out.extend(
            problems
                .into_iter()
                .take(limits.problems)
                .map(|p| format!("  {p}")),
        );
        if total > limits.problems {
            out.push(format!("  … {} more", total - limits.problems));
        }
    }
    out.join("\n")
}

fn describe_items(items: &[Value]) -> &'static str {
    if items.iter().all(Value::is_object) {
        "objects"
    } else if items.iter().all(Value::is_string) {
        "strings"
    } else if items.iter().all(Value::is_number) {
        "numbers"
    } else {
        "values"
    }
}

fn type_name(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "bool",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// The fields of an array of objects: `name (type)`, with `in k of n` when not in all.
fn schema(items: &[Value]) -> Vec<String> {
    let mut fields: Vec<(String, &'static str, usize)> = Vec::new();
    for item in items {
        if let Value::Object(map) = item {
            for (key, value) in map {
                match fields.iter_mut().find(|(k, _, _)| k == key) {
                    Some(field) => field.2 += 1,
                    None => fields.push((key.clone(), type_name(value), 1)),
                }
            }
        }
    }
    fields
        .into_iter()
        .map(|(key, kind, count)| {
            if count == items.len() {
                format!("{key} ({kind})")
            } else {
                format!("{key} ({kind}, in {count} of {})", items.len())
            }
        })
        .collect()
}

fn scalar(value: &Value, limit: usize) -> String {
    match value {
        Value::String(s) if s.chars().count() > limit => {
            format!("{:?}…", s.chars().take(limit).collect::<String>())
        }
        other => other.to_string(),
    }
}

fn outline(value: &Value, indent: usize, limits: &Limits, out: &mut Vec<String>) {
    let pad = "  ".repeat(indent);
    match value {
        Value::Object(map) => outline_object(map, indent, limits, out),
        Value::Array(items) => out.push(format!("{pad}[{} items]", items.len())),
        other => out.push(format!("{pad}{}", scalar(other, limits.string))),
    }
}

fn outline_object(map: &Map<String, Value>, indent: usize, limits: &Limits, out: &mut Vec<String>) {
    let pad = "  ".repeat(indent);
    for (key, value) in map {
        match value {
            Value::Object(inner) if indent < limits.depth && !inner.is_empty() => {
                out.push(format!("{pad}{key}:"));
                outline_object(inner, indent + 1, limits, out);
            }
            Value::Object(inner) => {
                out.push(format!("{pad}{key}: {{{} keys}}", inner.len()));
            }
            Value::Array(items) if items.is_empty() => out.push(format!("{pad}{key}: []")),
            Value::Array(items) if items.iter().all(|i| !i.is_object() && !i.is_array()) => {
                let shown: Vec<String> = items
                    .iter()
                    .take(3)
                    .map(|i| scalar(i, limits.string))
                    .collect();
                let more = if items.len() > 3 {
                    format!(", … {} items", items.len())
                } else {
                    String::new()
                };
                out.push(format!("{pad}{key}: [{}{more}]", shown.join(", ")));
            }
            Value::Array(items) => {
                let fields = schema(items);
                out.push(format!(
                    "{pad}{key}: [{} {}{}]",
                    items.len(),
                    describe_items(items),
                    if fields.is_empty() {
                        String::new()
                    } else {
                        format!(": {}", fields.join(", "))
                    }
                ));
            }
            other => out.push(format!("{pad}{key}: {}", scalar(other, limits.string))),
        }
    }
}

/// `path: value` for every non-empty value whose key or text reports a problem.
fn find_problems(value: &Value, path: &mut String, out: &mut Vec<String>) {
    match value {
        Value::Object(map) => {
            for (key, inner) in map {
                let len = path.len();
                if !path.is_empty() {
                    path.push('.');
                }
                path.push_str(key);
                let reportable = match inner {
                    Value::String(s) => !s.is_empty() && (is_signal(key) || is_signal(s)),
                    Value::Number(n) => is_signal(key) && n.as_f64().is_some_and(|n| n != 0.0),
                    Value::Bool(b) => is_signal(key) && *b,
                    _ => false,
                };
                if reportable {
                    out.push(format!("{path}: {}", scalar(inner, 200)));
                } else {
                    find_problems(inner, path, out);
                }
                path.truncate(len);
            }
        }
        Value::Array(items) => {
            for (index, inner) in items.iter().enumerate() {
                let len = path.len();
                path.push_str(&format!("[{index}]"));
                if let Value::String(s) = inner
                    && is_signal(s)
                {
                    out.push(format!("{path}: {}", scalar(inner, 200)));
                } else {
                    find_problems(inner, path, out);
                }
                path.truncate(len);
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arrays_become_schema_count_and_samples_with_problems_listed() {
        let items: Vec<Value> = (0..100)
            .map(|n| serde_json::json!({"name": format!("api-{n}"), "ready": n != 42,
                "state": if n == 42 { serde_json::json!({"waiting": {"reason": "CrashLoopBackOff"}}) } else { serde_json::json!({"running": {}}) }}))
            .collect();
        let text = serde_json::to_string_pretty(&items).unwrap();
        for level in [Level::Summary, Level::Aggressive, Level::Minimal] {
            let out = compress(&text, level);
            assert!(out.starts_with("array of 100 objects"), "{level}");
            assert!(
                out.contains("[42].state.waiting.reason: \"CrashLoopBackOff\""),
                "{level}: {out}"
            );
            assert!(out.len() * 10 < text.len(), "{level}");
        }
    }
}
