// swift-tools-version: 6.1
import PackageDescription

// Benchmarks live in their own package so that `swift build` and `swift test` of chatfeed do not
// compile ordo-one/benchmark. Run: `cd Benchmarks && swift package benchmark`.
let package = Package(
    name: "chatfeed-benchmarks",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(name: "chatfeed", path: "../"),
        .package(url: "https://github.com/ordo-one/benchmark", from: "1.38.1", traits: ["MallocInterposer"]),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
    ],
    targets: [
        // What the benchmarks share (a seeded generator, the feed benchmarks' bottom-chat events).
        .target(name: "BenchmarkSupport", dependencies: [.product(name: "ChatModel", package: "chatfeed")], path: "Support"),
        // A store seeded with numbered chats, for the guard and StoreProbe.
        .target(
            name: "StoreFixtures",
            dependencies: [.product(name: "ChatStore", package: "chatfeed"), .product(name: "ChatModel", package: "chatfeed")],
            path: "StoreFixtures"
        ),
        .executableTarget(
            name: "ListDiffBenchmarks",
            dependencies: [
                "BenchmarkSupport",
                .product(name: "Benchmark", package: "benchmark"),
                .product(name: "ListDiff", package: "chatfeed"),
            ],
            path: "Benchmarks/ListDiffBenchmarks",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        ),
        .executableTarget(
            name: "StoreBenchmarks",
            dependencies: [
                "BenchmarkSupport",
                .product(name: "Benchmark", package: "benchmark"),
                .product(name: "ChatStore", package: "chatfeed"),
                .product(name: "ChatModel", package: "chatfeed"),
                .product(name: "SQLite", package: "chatfeed"),
            ],
            path: "Benchmarks/StoreBenchmarks",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        ),
        .executableTarget(
            name: "FeedBenchmarks",
            dependencies: [
                "BenchmarkSupport",
                .product(name: "Benchmark", package: "benchmark"),
                .product(name: "ChangeFeed", package: "chatfeed"),
                .product(name: "ChatModel", package: "chatfeed"),
                .product(name: "WireProtocol", package: "chatfeed"),
            ],
            path: "Benchmarks/FeedBenchmarks",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        ),
        // The performance regression guard that CI runs (.ci/run): counts, not times, checked
        // against Thresholds/ (see Thresholds/README.md).
        .executableTarget(
            name: "GuardBenchmarks",
            dependencies: [
                "BenchmarkSupport",
                "StoreFixtures",
                .product(name: "Benchmark", package: "benchmark"),
                .product(name: "ChangeFeed", package: "chatfeed"),
                .product(name: "ChatModel", package: "chatfeed"),
                .product(name: "ChatStore", package: "chatfeed"),
                // The engine's module.
                .product(name: "ChatfeedEngine", package: "chatfeed"),
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "Benchmarks/GuardBenchmarks",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        ),
        // End-to-end load of the release chatfeedd as a child process: a plain executable, since
        // the ordo-one harness's repeated in-process iterations do not fit one long run of another
        // process. `swift run -c release DaemonLoad ingest|startup|gateway …` (see Results/daemon.md, gateway.md).
        // Linux's epoll for DaemonLoad's WebSocket clients (the Glibc module does not export it).
        .target(name: "LoadShims", path: "Tools/LoadShims"),
        .executableTarget(
            name: "DaemonLoad",
            dependencies: [
                "BenchmarkSupport",
                "LoadShims",
                .product(name: "ChatStore", package: "chatfeed"),
                .product(name: "ChatModel", package: "chatfeed"),
                .product(name: "JSONCodec", package: "chatfeed"),
                .product(name: "SQLite", package: "chatfeed"),
                .product(name: "WireProtocol", package: "chatfeed"),
            ],
            // Not directly under Benchmarks/: the ordo-one command plugin runs every executable
            // target whose directory's parent is named "Benchmarks".
            path: "Tools/DaemonLoad"
        ),
        // The feed's event without the harness, for callgrind's instruction counts and perf
        // (Tools/FeedProbe/main.swift says how).
        .executableTarget(
            name: "FeedProbe",
            dependencies: [
                "BenchmarkSupport",
                .product(name: "ChangeFeed", package: "chatfeed"),
                .product(name: "ChatModel", package: "chatfeed"),
            ],
            path: "Tools/FeedProbe"
        ),
        // The store's side of an ingest (posts in group commits and their catch-up read) without
        // the daemon, for callgrind and perf (Tools/StoreProbe/main.swift says how).
        .executableTarget(
            name: "StoreProbe",
            dependencies: [
                "BenchmarkSupport",
                "StoreFixtures",
                .product(name: "ChatStore", package: "chatfeed"),
                .product(name: "ChatModel", package: "chatfeed"),
            ],
            path: "Tools/StoreProbe"
        ),
    ]
)
