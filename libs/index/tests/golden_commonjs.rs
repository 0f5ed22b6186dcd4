//! CommonJS golden test over tests/fixtures/commonjs: functions defined by assignment
//! (`obj.name = function name() {}` on an object from `Object.create`, `exports.f =
//! function`, `X.prototype.m = function`, `var proto = module.exports = function`),
//! calls through `this` inside them, selectors made of the object's local name and the
//! property, and the messages they throw.

mod common;

use codectx_graph::Confidence::Resolved;
use common::index_fixture;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn commonjs_assignment_defined_functions() {
    let g = index_fixture("commonjs").await;
    assert!(g.report.skipped.is_empty(), "{:?}", g.report.skipped);
    let expected: Vec<(&str, &str, u32, u32)> = vec![
        // `module.exports = function () {}`: named by the file when anonymous.
        ("lib/anonymous.anonymous", "function", 3, 5),
        // `module.exports = { start() {}, stop: function () {} }`: the module's functions.
        ("lib/api.start", "function", 5, 7),
        ("lib/api.stop", "function", 8, 10),
        ("lib/layer.Layer", "function", 5, 11),
        ("lib/layer.Layer.match", "method", 16, 18),
        ("lib/layer.decodeParam", "function", 20, 25),
        // `var res = Object.create(...)`: a module-level variable, its methods' owner.
        // `module.exports = function query()`: the module's function `query`.
        ("lib/query.query", "function", 4, 6),
        ("lib/request.req", "variable", 3, 3),
        // `Object.defineProperty(req, 'host', { get() {}, set: function () {} })`: one
        // method for the property, spanning the call.
        ("lib/request.req.host", "method", 13, 20),
        ("lib/request.req.hostname", "method", 22, 24),
        ("lib/request.req.secure", "method", 6, 11),
        ("lib/response.res", "variable", 5, 5),
        ("lib/response.res.json", "method", 16, 19),
        ("lib/response.res.send", "method", 11, 14),
        ("lib/response.res.set", "method", 21, 24),
        ("lib/response.res.status", "method", 36, 39),
        ("lib/response.res.vary", "method", 43, 45),
        ("lib/router.proto", "function", 6, 10),
        ("lib/router.proto.handle", "method", 15, 20),
        ("lib/util.deprecate", "function", 3, 5),
        ("lib/util.flatten", "function", 9, 11),
        // An object literal bound to a name: a variable and its methods.
        ("lib/util.paths", "variable", 14, 23),
        ("lib/util.paths.join", "method", 16, 18),
        ("lib/util.paths.split", "method", 19, 21),
        // Methods generated in a loop (`Route.prototype[method] = function`): one method
        // named by the computed key; a string key is a plain name.
        ("lib/verbs.Route", "function", 5, 7),
        ("lib/verbs.Route.[method]", "method", 11, 13),
        ("lib/verbs.Route.dispatch", "method", 16, 18),
        ("lib/verbs.methods", "variable", 3, 3),
    ];
    let expected: Vec<(String, String, u32, u32)> = expected
        .into_iter()
        .map(|(n, k, s, e)| (n.to_owned(), k.to_owned(), s, e))
        .collect();
    assert_eq!(g.symbols().await, expected);
    assert_eq!(
        g.symbol("lib/request.req.secure").await.summary,
        "Whether the connection is secure."
    );
    // `this.hostname()` inside a property getter is its sibling `req.hostname`.
    assert_eq!(
        g.callees("lib/request.req.host")
            .await
            .into_iter()
            .map(|c| c.0)
            .collect::<Vec<_>>(),
        vec!["lib/request.req.hostname"]
    );
    assert_eq!(g.lookup("req.secure").await, vec!["lib/request.req.secure"]);
    assert_eq!(
        g.symbol("lib/verbs.Route.[method]").await.summary,
        "Adds a handler for one HTTP verb."
    );
    assert_eq!(
        g.callees("lib/verbs.Route.[method]")
            .await
            .into_iter()
            .map(|c| c.0)
            .collect::<Vec<_>>(),
        vec!["lib/verbs.Route.dispatch"]
    );
    assert_eq!(
        g.symbol("lib/response.res.send").await.summary,
        "Sends a response body."
    );
    // A `/** */` block documents the statement after it across a blank line: its first
    // line is the summary, its prose (tags' words kept, tag names and types dropped) the
    // doc; a plain comment must touch what it documents.
    let status = g.symbol("lib/response.res.status").await;
    assert_eq!(status.summary, "Sets the status code of the response.");
    assert_eq!(
        status.doc,
        "Sets the status code of the response. Chainable: returns the response, so a body \
         can follow. code the HTTP status code"
    );
    let vary = g.symbol("lib/response.res.vary").await;
    assert_eq!((vary.summary.as_str(), vary.doc.as_str()), ("", ""));
    assert_eq!(
        g.symbol("lib/layer.Layer.match").await.summary,
        "Whether the layer matches a path."
    );

    assert_eq!(
        g.symbol("lib/util.paths.join").await.summary,
        "Joins two parts."
    );
    // Calls inside object-literal methods belong to them.
    assert_eq!(
        g.callees("lib/util.paths.join")
            .await
            .into_iter()
            .map(|c| c.0)
            .collect::<Vec<_>>(),
        vec!["lib/util.flatten"]
    );
    // Selectors as a JavaScript developer names them.
    assert_eq!(g.lookup("res.send").await, vec!["lib/response.res.send"]);
    assert_eq!(
        g.lookup("proto.handle").await,
        vec!["lib/router.proto.handle"]
    );
    assert_eq!(
        g.lookup("Layer.prototype.match").await,
        vec!["lib/layer.Layer.match"]
    );
    assert_eq!(
        g.lookup("exports.deprecate").await,
        vec!["lib/util.deprecate"]
    );

    // Calls through `this` inside an assignment-defined method reach its siblings.
    assert_eq!(
        g.callees("lib/response.res.json").await,
        vec![
            (
                "JSON.stringify".to_owned(),
                17,
                codectx_graph::Confidence::Unresolved
            ),
            ("lib/response.res.send".to_owned(), 18, Resolved),
        ]
    );
    assert!(g.callers("lib/layer.decodeParam").await.contains(&(
        "lib/layer.Layer.match".to_owned(),
        17,
        Resolved
    )));
    // The constant part of a message built by concatenation is kept.
    assert_eq!(
        g.errors_in("lib/layer.js").await,
        vec![("Layer path must be a string, got".to_owned(), 22)]
    );
}
