//! Golden tests of the languages read through query files (`libs/index/queries`), one
//! fixture each under tests/fixtures/langs: every symbol with its qualified name in the
//! language's own convention and its line range; doc summaries; calls resolved across
//! files and inside types; tests by the language's conventions and what they test;
//! imports; string literals; and one idiom of the language each (C++ out-of-line
//! methods and GoogleTest macros, Ruby `#`/`.` methods, PHP namespaces, Kotlin extension
//! functions and companion objects, Swift extensions, Scala companions, Lua `:` methods,
//! Elixir modules, Dart named tests, Protobuf RPCs, Zig test blocks).

mod common;

use codectx_graph::Confidence::{self, NameMatch, Resolved};
use codectx_graph::{Direction, EdgeKind, GraphStore, NodeKind};
use common::{Indexed, index_fixture};

/// What one fixture must give.
struct Expected {
    fixture: &'static str,
    language: &'static str,
    /// Every symbol: (qualified name, kind, start line, end line).
    symbols: &'static [(&'static str, &'static str, u32, u32)],
    /// (symbol, its summary).
    summaries: &'static [(&'static str, &'static str)],
    /// (caller, callee, line, confidence): calls that must be there.
    calls: &'static [(&'static str, &'static str, u32, Confidence)],
    /// The symbols that are tests.
    tests: &'static [&'static str],
    /// (tested symbol, test): TESTED_BY edges that must be there.
    tested_by: &'static [(&'static str, &'static str)],
    /// (type, what it extends or implements).
    implements: &'static [(&'static str, &'static str)],
    /// (file, module it imports).
    imports: &'static [(&'static str, &'static str)],
    /// (file, a string literal or error message written in it).
    strings: &'static [(&'static str, &'static str)],
    /// (selector as a developer writes it, the symbol it finds).
    lookups: &'static [(&'static str, &'static str)],
}

async fn symbol_id(g: &Indexed, qualified: &str) -> String {
    g.store
        .nodes_by_qualified_name(&g.graph, qualified, 10)
        .await
        .unwrap()
        .into_iter()
        .find(|n| n.kind.is_symbol())
        .unwrap_or_else(|| panic!("no symbol {qualified}"))
        .id
}

async fn neighbours(g: &Indexed, id: &str, kind: EdgeKind) -> Vec<(String, u32, Confidence)> {
    g.store
        .edges(&g.graph, id, &[kind], Direction::Outgoing, 200)
        .await
        .unwrap()
        .hits
        .into_iter()
        .map(|h| (h.node.qualified_name, h.line, h.confidence))
        .collect()
}

async fn check(expected: &Expected) {
    let g = index_fixture(&format!("langs/{}", expected.fixture)).await;
    let name = expected.fixture;
    assert!(
        g.report.skipped.is_empty(),
        "{name}: {:?}",
        g.report.skipped
    );
    let mut symbols: Vec<(String, String, u32, u32)> = expected
        .symbols
        .iter()
        .map(|(q, k, s, e)| ((*q).to_owned(), (*k).to_owned(), *s, *e))
        .collect();
    symbols.sort();
    assert_eq!(g.symbols().await, symbols, "{name}: symbols");
    let all = g
        .store
        .nodes_of_kinds(&g.graph, &codectx_graph::query::SYMBOL_KINDS)
        .await
        .unwrap();
    assert!(
        all.iter().all(|n| n.language == expected.language),
        "{name}: every symbol is {}",
        expected.language
    );
    let mut tests: Vec<&str> = all
        .iter()
        .filter(|n| n.test)
        .map(|n| n.qualified_name.as_str())
        .collect();
    tests.sort();
    let mut want_tests = expected.tests.to_vec();
    want_tests.sort();
    assert_eq!(tests, want_tests, "{name}: tests");
    for (symbol, summary) in expected.summaries {
        let node = all.iter().find(|n| n.qualified_name == *symbol).unwrap();
        assert_eq!(node.summary, *summary, "{name}: summary of {symbol}");
        assert!(node.doc.starts_with(summary), "{name}: doc of {symbol}");
    }
    for (caller, callee, line, confidence) in expected.calls {
        let calls = neighbours(&g, &symbol_id(&g, caller).await, EdgeKind::Calls).await;
        assert!(
            calls.contains(&((*callee).to_owned(), *line, *confidence)),
            "{name}: {caller} -> {callee} at {line} ({confidence:?}) in {calls:?}"
        );
    }
    for (tested, test) in expected.tested_by {
        let tests = neighbours(&g, &symbol_id(&g, tested).await, EdgeKind::TestedBy).await;
        assert!(
            tests.iter().any(|(t, ..)| t == test),
            "{name}: {tested} tested by {test} in {tests:?}"
        );
    }
    for (type_name, base) in expected.implements {
        let bases = neighbours(&g, &symbol_id(&g, type_name).await, EdgeKind::Implements).await;
        assert!(
            bases.iter().any(|(b, ..)| b == base),
            "{name}: {type_name} implements {base} in {bases:?}"
        );
    }
    for (path, module) in expected.imports {
        let file = g
            .store
            .nodes_in_path(&g.graph, path)
            .await
            .unwrap()
            .into_iter()
            .find(|n| n.kind == NodeKind::File)
            .unwrap_or_else(|| panic!("{name}: no file {path}"));
        let imports = neighbours(&g, &file.id, EdgeKind::Imports).await;
        assert!(
            imports.iter().any(|(m, ..)| m == module),
            "{name}: {path} imports {module} in {imports:?}"
        );
    }
    for (path, text) in expected.strings {
        let mut found = g.strings_in(path).await;
        found.extend(g.errors_in(path).await);
        assert!(
            found.iter().any(|(s, _)| s == text),
            "{name}: {text:?} in {path}: {found:?}"
        );
    }
    for (selector, symbol) in expected.lookups {
        assert_eq!(
            g.lookup(selector).await,
            vec![(*symbol).to_owned()],
            "{name}: lookup {selector}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn c() {
    check(&Expected {
        fixture: "c",
        language: "c",
        symbols: &[
            ("STACK_MAX", "constant", 4, 4),
            ("main", "function", 12, 16),
            ("stack", "type", 7, 11),
            ("stack_each", "function", 33, 42),
            ("stack_grow", "function", 5, 15),
            ("stack_push", "function", 22, 30),
            ("test_push_grows", "function", 4, 10),
            ("visit_fn", "type", 13, 13),
        ],
        summaries: &[
            (
                "stack_push",
                "Pushes a value, growing the buffer when it is full.",
            ),
            ("stack", "A growable stack of ints."),
        ],
        // A static function called before its definition's file position, and across files.
        calls: &[
            ("stack_push", "stack_grow", 24, Resolved),
            ("test_push_grows", "stack_push", 8, Resolved),
        ],
        tests: &["test_push_grows"],
        tested_by: &[("stack_push", "test_push_grows")],
        implements: &[],
        imports: &[("src/stack.c", "stack.h"), ("src/stack.c", "stdlib.h")],
        strings: &[("src/stack.c", "stack: out of memory while growing\\n")],
        lookups: &[("stack_grow", "stack_grow")],
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cpp() {
    check(&Expected {
        fixture: "cpp",
        language: "cpp",
        symbols: &[
            ("CircleTest.AreaOfUnitCircle", "function", 4, 7),
            ("ShapesFixture.TotalAreaSumsShapes", "function", 9, 11),
            ("geo::Circle", "class", 16, 23),
            ("geo::Circle::Circle", "method", 18, 18),
            // Defined out of line (`double Circle::area() const`) in the namespace.
            ("geo::Circle::area", "method", 9, 14),
            ("geo::Shape", "class", 8, 13),
            ("geo::Shape::describe", "method", 16, 18),
            ("geo::Shape::~Shape", "method", 10, 10),
            ("geo::kPi", "constant", 6, 6),
            ("geo::total_area", "function", 20, 26),
        ],
        summaries: &[("geo::Circle", "A circle of a given radius.")],
        calls: &[
            ("geo::total_area", "geo::Circle::area", 23, NameMatch),
            (
                "ShapesFixture.TotalAreaSumsShapes",
                "geo::total_area",
                10,
                NameMatch,
            ),
        ],
        tests: &[
            "CircleTest.AreaOfUnitCircle",
            "ShapesFixture.TotalAreaSumsShapes",
        ],
        tested_by: &[("geo::total_area", "ShapesFixture.TotalAreaSumsShapes")],
        implements: &[("geo::Circle", "geo::Shape")],
        imports: &[("tests/shapes_test.cpp", "gtest/gtest.h")],
        strings: &[("src/shapes.cpp", "circle radius must not be negative")],
        lookups: &[("Circle::area", "geo::Circle::area")],
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn csharp() {
    check(&Expected {
        fixture: "csharp",
        language: "csharp",
        symbols: &[
            ("Shop.Billing.ICalculator", "interface", 7, 10),
            ("Shop.Billing.ICalculator.Total", "method", 9, 9),
            ("Shop.Billing.Invoice", "class", 48, 48),
            ("Shop.Billing.TaxCalculator", "class", 15, 46),
            ("Shop.Billing.TaxCalculator.DefaultRate", "constant", 17, 17),
            ("Shop.Billing.TaxCalculator.Rate", "method", 45, 45),
            ("Shop.Billing.TaxCalculator.Sum", "method", 35, 43),
            ("Shop.Billing.TaxCalculator.TaxCalculator", "method", 20, 23),
            ("Shop.Billing.TaxCalculator.Total", "method", 25, 33),
            ("Shop.Billing.Tests.TaxCalculatorTests", "class", 6, 16),
            (
                "Shop.Billing.Tests.TaxCalculatorTests.AddsTheTaxRate",
                "method",
                8,
                13,
            ),
            (
                "Shop.Billing.Tests.TaxCalculatorTests.Helper",
                "method",
                15,
                15,
            ),
        ],
        // XML documentation reads as text.
        summaries: &[("Shop.Billing.ICalculator", "Computes invoice totals.")],
        calls: &[
            (
                "Shop.Billing.TaxCalculator.Total",
                "Shop.Billing.TaxCalculator.Sum",
                27,
                Resolved,
            ),
            // `new TaxCalculator(..)` in a file-scoped namespace that `using`s the class's.
            (
                "Shop.Billing.Tests.TaxCalculatorTests.AddsTheTaxRate",
                "Shop.Billing.TaxCalculator",
                11,
                Resolved,
            ),
        ],
        tests: &["Shop.Billing.Tests.TaxCalculatorTests.AddsTheTaxRate"],
        tested_by: &[(
            "Shop.Billing.TaxCalculator",
            "Shop.Billing.Tests.TaxCalculatorTests.AddsTheTaxRate",
        )],
        implements: &[("Shop.Billing.TaxCalculator", "Shop.Billing.ICalculator")],
        imports: &[("tests/TaxCalculatorTests.cs", "Xunit")],
        strings: &[("src/TaxCalculator.cs", "invoice total must not be negative")],
        lookups: &[("TaxCalculator.Total", "Shop.Billing.TaxCalculator.Total")],
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ruby() {
    check(&Expected {
        fixture: "ruby",
        language: "ruby",
        symbols: &[
            ("CartTest", "class", 3, 7),
            ("CartTest#test_total_of_empty_cart_raises", "method", 4, 6),
            ("Shop", "type", 4, 37),
            ("Shop::Cart", "class", 6, 36),
            ("Shop::Cart#each", "method", 25, 27),
            ("Shop::Cart#initialize", "method", 11, 13),
            ("Shop::Cart#subtotal", "method", 31, 35),
            ("Shop::Cart#total", "method", 16, 18),
            // `def self.from_json`: a method of the class itself.
            ("Shop::Cart.from_json", "method", 21, 23),
            ("Shop::Cart::TAX", "constant", 9, 9),
            // An RSpec example, named by its description.
            ("adds tax to the subtotal", "function", 4, 7),
        ],
        summaries: &[(
            "Shop::Cart#total",
            "Total price with tax, rounded to cents.",
        )],
        calls: &[
            // `Shop::Cart.new(...)` builds the class.
            ("adds tax to the subtotal", "Shop::Cart", 5, NameMatch),
            (
                "CartTest#test_total_of_empty_cart_raises",
                "Shop::Cart#total",
                5,
                NameMatch,
            ),
        ],
        tests: &[
            "CartTest#test_total_of_empty_cart_raises",
            "adds tax to the subtotal",
        ],
        tested_by: &[("Shop::Cart#total", "adds tax to the subtotal")],
        implements: &[("Shop::Cart", "Base")],
        imports: &[("lib/shop/cart.rb", "json")],
        strings: &[("lib/shop/cart.rb", "cart has no items to total")],
        lookups: &[
            ("Cart#total", "Shop::Cart#total"),
            ("Cart.from_json", "Shop::Cart.from_json"),
        ],
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn php() {
    check(&Expected {
        fixture: "php",
        language: "php",
        symbols: &[
            ("App\\Billing\\Mailer", "class", 13, 41),
            ("App\\Billing\\Mailer::RETRIES", "constant", 15, 15),
            ("App\\Billing\\Mailer::__construct", "method", 17, 19),
            ("App\\Billing\\Mailer::deliver", "method", 32, 35),
            ("App\\Billing\\Mailer::make", "method", 37, 40),
            ("App\\Billing\\Mailer::send", "method", 24, 30),
            ("App\\Billing\\Sender", "interface", 43, 46),
            ("App\\Billing\\Sender::send", "method", 45, 45),
            ("App\\Billing\\format_amount", "function", 48, 51),
            ("App\\Tests\\MailerTest", "class", 8, 20),
            ("App\\Tests\\MailerTest::invoice", "method", 16, 19),
            (
                "App\\Tests\\MailerTest::testSendRequiresARecipient",
                "method",
                10,
                14,
            ),
        ],
        summaries: &[(
            "App\\Billing\\Mailer::send",
            "Sends one invoice; throws when it has no recipient.",
        )],
        calls: &[
            // `$this->deliver(...)`.
            (
                "App\\Billing\\Mailer::send",
                "App\\Billing\\Mailer::deliver",
                29,
                Resolved,
            ),
            // `Mailer::make()` through `use App\Billing\Mailer`.
            (
                "App\\Tests\\MailerTest::testSendRequiresARecipient",
                "App\\Billing\\Mailer::make",
                13,
                Resolved,
            ),
        ],
        tests: &["App\\Tests\\MailerTest::testSendRequiresARecipient"],
        tested_by: &[(
            "App\\Billing\\Mailer::make",
            "App\\Tests\\MailerTest::testSendRequiresARecipient",
        )],
        implements: &[("App\\Billing\\Mailer", "App\\Billing\\Sender")],
        imports: &[("src/Mailer.php", "App\\Models\\Invoice")],
        strings: &[("src/Mailer.php", "invoice has no recipient address")],
        lookups: &[("Mailer::send", "App\\Billing\\Mailer::send")],
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kotlin() {
    check(&Expected {
        fixture: "kotlin",
        language: "kotlin",
        symbols: &[
            ("com.example.shop.MemoryRepository", "class", 16, 31),
            (
                "com.example.shop.MemoryRepository.CAPACITY",
                "constant",
                28,
                28,
            ),
            // A companion object's members are its class's.
            ("com.example.shop.MemoryRepository.empty", "method", 29, 29),
            ("com.example.shop.MemoryRepository.find", "method", 19, 19),
            ("com.example.shop.MemoryRepository.save", "method", 21, 25),
            ("com.example.shop.MemoryRepositoryTest", "class", 6, 15),
            (
                "com.example.shop.MemoryRepositoryTest.findsASavedOrder",
                "method",
                7,
                12,
            ),
            (
                "com.example.shop.MemoryRepositoryTest.helper",
                "method",
                14,
                14,
            ),
            ("com.example.shop.Order", "class", 33, 33),
            // An extension function is a method of the type it extends.
            ("com.example.shop.Order.isRecent", "method", 38, 38),
            ("com.example.shop.Repository", "interface", 7, 9),
            ("com.example.shop.Repository.find", "method", 8, 8),
            ("com.example.shop.log", "function", 35, 35),
        ],
        summaries: &[(
            "com.example.shop.Order.isRecent",
            "Whether the order was placed in the last minute.",
        )],
        calls: &[
            (
                "com.example.shop.MemoryRepository.save",
                "com.example.shop.log",
                24,
                Resolved,
            ),
            (
                "com.example.shop.MemoryRepositoryTest.findsASavedOrder",
                "com.example.shop.MemoryRepository.empty",
                9,
                Resolved,
            ),
        ],
        tests: &["com.example.shop.MemoryRepositoryTest.findsASavedOrder"],
        tested_by: &[(
            "com.example.shop.MemoryRepository.save",
            "com.example.shop.MemoryRepositoryTest.findsASavedOrder",
        )],
        implements: &[(
            "com.example.shop.MemoryRepository",
            "com.example.shop.Repository",
        )],
        imports: &[("src/main/kotlin/shop/Repository.kt", "java.time.Instant")],
        strings: &[(
            "src/main/kotlin/shop/Repository.kt",
            "an order needs an id to be saved",
        )],
        lookups: &[("Order.isRecent", "com.example.shop.Order.isRecent")],
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn swift() {
    check(&Expected {
        fixture: "swift",
        language: "swift",
        symbols: &[
            ("Money", "class", 4, 17),
            ("Money.adding", "method", 11, 16),
            // Declared in `extension Money`.
            ("Money.format", "method", 30, 32),
            ("MoneyError", "type", 19, 21),
            ("MoneyTests", "class", 4, 11),
            ("MoneyTests.helper", "method", 10, 10),
            ("MoneyTests.testAddingTheSameCurrency", "method", 5, 8),
            ("Pricing", "interface", 23, 25),
            ("Pricing.price", "method", 24, 24),
            ("Register", "class", 35, 41),
            ("Register.total", "method", 38, 40),
        ],
        summaries: &[("Money.adding", "Adds two amounts of the same currency.")],
        calls: &[
            ("Money.adding", "Money", 15, Resolved),
            ("Register.total", "Money.adding", 39, NameMatch),
        ],
        tests: &["MoneyTests.testAddingTheSameCurrency"],
        tested_by: &[("Money.adding", "MoneyTests.testAddingTheSameCurrency")],
        implements: &[("MoneyTests", "XCTestCase")],
        imports: &[("Tests/ShopTests/MoneyTests.swift", "XCTest")],
        strings: &[(
            "Sources/Shop/Money.swift",
            "currencies differ: cannot add them",
        )],
        lookups: &[("Money.format", "Money.format")],
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn scala() {
    check(&Expected {
        fixture: "scala",
        language: "scala",
        symbols: &[
            ("shop.pricing.DiscountPricer", "class", 11, 16),
            ("shop.pricing.DiscountPricer.price", "method", 12, 15),
            ("shop.pricing.Item", "class", 24, 24),
            // The trait and its companion object share the name.
            ("shop.pricing.Pricer", "class", 18, 22),
            ("shop.pricing.Pricer", "interface", 6, 8),
            ("shop.pricing.Pricer.Default", "constant", 19, 19),
            ("shop.pricing.Pricer.apply", "method", 21, 21),
            ("shop.pricing.Pricer.price", "method", 7, 7),
            ("shop.pricing.PricerSpec", "class", 5, 9),
            // A ScalaTest case, named by its title.
            (
                "shop.pricing.PricerSpec.a discount lowers the price",
                "function",
                6,
                8,
            ),
        ],
        summaries: &[(
            "shop.pricing.DiscountPricer",
            "Takes a percentage off what another pricer asks.",
        )],
        calls: &[(
            "shop.pricing.Pricer.apply",
            "shop.pricing.DiscountPricer",
            21,
            Resolved,
        )],
        tests: &["shop.pricing.PricerSpec.a discount lowers the price"],
        tested_by: &[],
        implements: &[("shop.pricing.DiscountPricer", "shop.pricing.Pricer")],
        imports: &[(
            "src/test/scala/shop/PricerSpec.scala",
            "org.scalatest.funsuite.AnyFunSuite",
        )],
        strings: &[(
            "src/main/scala/shop/Pricer.scala",
            "a discount cannot exceed one hundred percent",
        )],
        lookups: &[("DiscountPricer.price", "shop.pricing.DiscountPricer.price")],
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bash() {
    check(&Expected {
        fixture: "bash",
        language: "bash",
        symbols: &[
            ("DEPLOY_DIR", "constant", 7, 7),
            ("build_release", "function", 9, 11),
            ("deploy", "function", 10, 13),
            ("die", "function", 4, 7),
            // In `bin/release`, a script without an extension: its `#!` line says shell.
            ("publish", "function", 4, 6),
            // `function name { }`, the other way to define one.
            ("restart_service", "function", 15, 17),
            ("test_deploy_dir_is_set", "function", 4, 6),
        ],
        summaries: &[("deploy", "Copies the build to the server and restarts it.")],
        // Commands that name a function of another, sourced file.
        calls: &[
            ("deploy", "build_release", 11, Resolved),
            ("restart_service", "die", 16, Resolved),
            ("publish", "build_release", 5, Resolved),
        ],
        tests: &["test_deploy_dir_is_set"],
        tested_by: &[],
        implements: &[],
        imports: &[("deploy.sh", "./lib/common.sh")],
        strings: &[("deploy.sh", "could not restart the app service")],
        lookups: &[("die", "die")],
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lua() {
    check(&Expected {
        fixture: "lua",
        language: "lua",
        symbols: &[
            // `function Account:deposit(amount)`.
            ("Account.deposit", "method", 29, 32),
            ("M.normalize", "method", 16, 19),
            ("M.parse", "method", 7, 13),
            ("fills in the default port", "function", 4, 6),
            ("trim", "function", 21, 23),
        ],
        summaries: &[("M.parse", "Parses a config string into a table.")],
        calls: &[
            ("M.parse", "M.normalize", 12, NameMatch),
            ("Account.deposit", "trim", 31, Resolved),
        ],
        tests: &["fills in the default port"],
        tested_by: &[],
        implements: &[],
        imports: &[("src/config.lua", "json")],
        strings: &[("src/config.lua", "config is not valid json")],
        lookups: &[("Account:deposit", "Account.deposit")],
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn elixir() {
    check(&Expected {
        fixture: "elixir",
        language: "elixir",
        symbols: &[
            ("Shop.Cart", "type", 1, 20),
            ("Shop.Cart.add", "method", 6, 6),
            ("Shop.Cart.apply_tax", "method", 16, 19),
            ("Shop.Cart.total", "method", 9, 14),
            ("Shop.CartTest", "type", 1, 7),
            ("Shop.CartTest.totals with tax", "function", 4, 6),
        ],
        summaries: &[("Shop.Cart.total", "Totals the cart in cents, with tax.")],
        calls: &[
            // A local call at the end of a pipeline.
            ("Shop.Cart.total", "Shop.Cart.apply_tax", 13, Resolved),
            (
                "Shop.CartTest.totals with tax",
                "Shop.Cart.total",
                5,
                Resolved,
            ),
        ],
        tests: &["Shop.CartTest.totals with tax"],
        tested_by: &[("Shop.Cart.total", "Shop.CartTest.totals with tax")],
        implements: &[],
        imports: &[("lib/shop/cart.ex", "Shop.Item")],
        strings: &[("lib/shop/cart.ex", "a cart total cannot be negative")],
        lookups: &[("Cart.total", "Shop.Cart.total")],
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dart() {
    check(&Expected {
        fixture: "dart",
        language: "dart",
        symbols: &[
            ("ProfileService", "class", 6, 26),
            ("ProfileService._fetch", "method", 19, 25),
            ("ProfileService.load", "method", 11, 17),
            ("ProfileService.timeout", "constant", 8, 8),
            ("greet", "function", 28, 28),
            ("main", "function", 3, 7),
            ("main.load answers from the cache", "function", 4, 6),
        ],
        summaries: &[(
            "ProfileService.load",
            "Returns the cached profile or fetches it.",
        )],
        calls: &[
            ("ProfileService.load", "ProfileService._fetch", 16, Resolved),
            ("main.load answers from the cache", "greet", 5, Resolved),
        ],
        tests: &["main.load answers from the cache"],
        tested_by: &[("greet", "main.load answers from the cache")],
        implements: &[
            ("ProfileService", "BaseService"),
            ("ProfileService", "Cache"),
        ],
        imports: &[("lib/profile_service.dart", "package:http/http.dart")],
        strings: &[(
            "lib/profile_service.dart",
            "profile service answered with an error",
        )],
        lookups: &[("ProfileService.load", "ProfileService.load")],
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn protobuf() {
    check(&Expected {
        fixture: "proto",
        language: "protobuf",
        symbols: &[
            ("shop.v1.GetOrderRequest", "class", 31, 33),
            ("shop.v1.Order", "class", 15, 25),
            ("shop.v1.Order.Item", "class", 21, 24),
            ("shop.v1.OrderService", "interface", 8, 12),
            ("shop.v1.OrderService.GetOrder", "method", 11, 11),
            ("shop.v1.OrderService.PlaceOrder", "method", 10, 10),
            ("shop.v1.PlaceOrderRequest", "class", 27, 29),
            ("shop.v1.Status", "type", 35, 38),
        ],
        summaries: &[(
            "shop.v1.OrderService.PlaceOrder",
            "Places an order and returns it with its id.",
        )],
        calls: &[],
        tests: &[],
        tested_by: &[],
        implements: &[],
        imports: &[("shop/v1/orders.proto", "google/protobuf/timestamp.proto")],
        strings: &[],
        // Which service defines an RPC.
        lookups: &[("PlaceOrder", "shop.v1.OrderService.PlaceOrder")],
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn zig() {
    check(&Expected {
        fixture: "zig",
        language: "zig",
        symbols: &[
            ("Point", "class", 26, 33),
            ("Point.norm", "method", 30, 32),
            // A function returning a struct type: its functions are nested in it.
            ("Ring", "function", 4, 17),
            ("Ring.push", "function", 12, 15),
            ("sum", "function", 20, 24),
            ("sum adds the values", "function", 35, 37),
        ],
        summaries: &[("Ring", "A fixed-capacity ring buffer of T.")],
        calls: &[
            ("Point.norm", "sum", 31, Resolved),
            ("sum adds the values", "sum", 36, Resolved),
        ],
        tests: &["sum adds the values"],
        tested_by: &[("sum", "sum adds the values")],
        implements: &[],
        imports: &[("src/ring.zig", "std")],
        strings: &[],
        lookups: &[("Point.norm", "Point.norm")],
    })
    .await;
}

/// A C++ header is told from a C one by its text (they share `.h`).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn headers_are_c_or_cpp_by_their_text() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("plain.h"),
        "/* A C header. */\nint add(int a, int b);\nstruct point { int x; int y; };\n",
    )
    .unwrap();
    std::fs::write(
        dir.path().join("shape.h"),
        "namespace geo {\nclass Shape {\npublic:\n  int sides() const { return 0; }\n};\n}\n",
    )
    .unwrap();
    let g = common::index_path(dir.path(), "headers").await;
    let symbols = g.symbols().await;
    assert!(symbols.iter().any(|(q, k, ..)| q == "point" && k == "type"));
    assert!(
        symbols
            .iter()
            .any(|(q, k, ..)| q == "geo::Shape::sides" && k == "method")
    );
    assert_eq!(g.symbol("point").await.language, "c");
    assert_eq!(g.symbol("geo::Shape").await.language, "cpp");
}
