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
            problems: 200,
        },
        Level::Aggressive => Limits {
            samples: 1,
            depth: 2,
            string: 60,
            problems: 200,
        },
        Level::Minimal => Limits {
            samples: 0,
            depth: 1,
            string: 40,
            problems: 200,
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
        // Grouped under the array element they belong to: `items[7 worker-5b7c9]:`.
        let mut group: Option<String> = None;
        for problem in problems.into_iter().take(limits.problems) {
            match problem.split_once("].") {
                Some((head, tail)) if head.contains('[') => {
                    if group.as_deref() != Some(head) {
                        out.push(format!("  {head}]:"));
                        group = Some(head.to_owned());
                    }
                    out.push(format!("    {tail}"));
                }
                _ => {
                    group = None;
                    out.push(format!("  {problem}"));
                }
            }
        }
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

/// Keys an object may show one by one; beyond, an object whose values share one type
/// is a map (`releases` by version) and reads as its count, a few keys and the shape of
/// its values.
const MAP_KEYS: usize = 12;

fn outline_object(map: &Map<String, Value>, indent: usize, limits: &Limits, out: &mut Vec<String>) {
    let pad = "  ".repeat(indent);
    let kinds: std::collections::BTreeSet<&str> = map.values().map(type_name).collect();
    if map.len() > MAP_KEYS && kinds.len() == 1 {
        let keys: Vec<&String> = map.keys().collect();
        let shown: Vec<&str> = keys
            .iter()
            .take(3)
            .chain(keys.iter().skip(keys.len().saturating_sub(3)))
            .map(|k| k.as_str())
            .collect();
        out.push(format!(
            "{pad}{{{} keys: {}, …, {}}}",
            map.len(),
            shown[..3].join(", "),
            shown[3..].join(", ")
        ));
        let values: Vec<Value> = map.values().cloned().collect();
        let items: Vec<Value> = if values.iter().all(Value::is_array) {
            values
                .iter()
                .filter_map(Value::as_array)
                .flatten()
                .cloned()
                .collect()
        } else {
            values
        };
        let fields = schema(&items);
        if !fields.is_empty() {
            out.push(format!("{pad}each: {}", fields.join(", ")));
        }
        return;
    }
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

/// The words of a key: `restartCount` -> restart, count; `exit_code` -> exit, code.
fn key_words(key: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut word = String::new();
    for c in key.chars() {
        if !c.is_ascii_alphanumeric() {
            if !word.is_empty() {
                words.push(std::mem::take(&mut word));
            }
            continue;
        }
        if c.is_ascii_uppercase()
            && !word.is_empty()
            && !word.ends_with(|p: char| p.is_ascii_uppercase())
        {
            words.push(std::mem::take(&mut word));
        }
        word.push(c.to_ascii_lowercase());
    }
    if !word.is_empty() {
        words.push(word);
    }
    words
}

/// Keys that configure (a threshold, a timeout, a limit), whatever word they contain.
const SETTING_WORDS: &[&str] = &[
    "threshold",
    "seconds",
    "timeout",
    "limit",
    "max",
    "min",
    "period",
    "delay",
    "retries",
    "budget",
    "ms",
    "percent",
    "policy",
    "grace",
    "interval",
];
/// Counters that report trouble when not zero.
const TROUBLE_COUNTERS: &[&str] = &[
    "error",
    "errors",
    "failed",
    "failure",
    "failures",
    "warning",
    "warnings",
    "restart",
    "restarts",
    "panics",
    "exceptions",
    "crashes",
];
/// Flags that report trouble when false.
const HEALTH_FLAGS: &[&str] = &[
    "ready",
    "healthy",
    "available",
    "ok",
    "success",
    "succeeded",
    "passed",
    "started",
];

fn is_setting(words: &[String]) -> bool {
    words.iter().any(|w| SETTING_WORDS.contains(&w.as_str()))
}

/// Whether `key: value` reports a problem.
fn reports_problem(key: &str, value: &Value) -> bool {
    let words = key_words(key);
    match value {
        // A status or message, not a document that mentions errors (a README).
        Value::String(text) => {
            !text.is_empty()
                && text.len() <= 500
                && (is_signal(text) || (is_signal(key) && !is_setting(&words)))
        }
        Value::Number(number) => {
            let nonzero = number.as_f64().is_some_and(|n| n != 0.0);
            nonzero
                && !is_setting(&words)
                && (words.iter().any(|w| TROUBLE_COUNTERS.contains(&w.as_str()))
                    || (words.first().is_some_and(|w| w == "exit")
                        && words.last().is_some_and(|w| w == "code")))
        }
        Value::Bool(flag) => {
            (!flag
                && words
                    .last()
                    .is_some_and(|w| HEALTH_FLAGS.contains(&w.as_str())))
                || (*flag && words.iter().any(|w| TROUBLE_COUNTERS.contains(&w.as_str())))
        }
        _ => false,
    }
}

/// What names an element of an array: its `name`, `id`, `key` or `metadata.name`.
fn identity(value: &Value) -> Option<&str> {
    let object = value.as_object()?;
    ["name", "id", "key", "title"]
        .iter()
        .find_map(|key| object.get(*key).and_then(Value::as_str))
        .or_else(|| object.get("metadata")?.get("name")?.as_str())
        .filter(|name| name.len() <= 120)
}

/// `path: value` for every value whose key or text reports a problem: an error or
/// warning text, a trouble counter that is not zero, a health flag that is false. Array
/// elements are named by their identity (`items[7 payments-worker-5b7c9]`).
fn find_problems(value: &Value, path: &mut String, out: &mut Vec<String>) {
    match value {
        Value::Object(map) => {
            for (key, inner) in map {
                let len = path.len();
                if !path.is_empty() {
                    path.push('.');
                }
                path.push_str(key);
                if reports_problem(key, inner) {
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
                match identity(inner) {
                    Some(name) => path.push_str(&format!("[{index} {name}]")),
                    None => path.push_str(&format!("[{index}]")),
                }
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
                out.contains("  [42 api-42]:\n    ready: false\n    state.waiting.reason: \"CrashLoopBackOff\""),
                "{level}: {out}"
            );
            assert!(out.len() * 10 < text.len(), "{level}");
        }
    }
}
