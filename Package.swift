// swift-tools-version: 6.1
import PackageDescription

let package = Package(
    name: "chatfeed",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "ListDiff", targets: ["ListDiff"]),
        .library(name: "ChatModel", targets: ["ChatModel"]),
        .library(name: "JSONCodec", targets: ["JSONCodec"]),
        .library(name: "SQLite", targets: ["SQLite"]),
        .library(name: "ChatStore", targets: ["ChatStore"]),
        .library(name: "ChangeFeed", targets: ["ChangeFeed"]),
        .library(name: "WireProtocol", targets: ["WireProtocol"]),
        .library(name: "ChatfeedConfig", targets: ["ChatfeedConfig"]),
        .library(name: "ChatfeedEngine", targets: ["ChatfeedEngine"]),
        .library(name: "ChatfeedClient", targets: ["ChatfeedClient"]),
        .library(name: "ChatfeedUIKit", targets: ["ChatfeedUIKit"]),
        .library(name: "ChatfeedGateway", targets: ["ChatfeedGateway"]),
        .executable(name: "chatfeedd", targets: ["chatfeedd"]),
        .executable(name: "chatfeed", targets: ["chatfeed"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1"),
        // The Linux WebSocket client of `ChatfeedClient` (the gateway serves frames with NIOWebSocket).
        .package(url: "https://github.com/hummingbird-project/hummingbird-websocket", from: "2.8.1"),
        .package(url: "https://github.com/vapor/jwt-kit", from: "5.7.1"),
        .package(url: "https://github.com/apple/swift-metrics", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.4.1"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-nio-extras", from: "1.35.2"),
        .package(url: "https://github.com/apple/swift-http-types", from: "1.8.0"),
    ],
    targets: [
        // Pure: the batch type, the diff with upward-preferred moves, the UIKit batch model.
        .target(name: "ListDiff"),
        // Pure domain values shared by the store, the feed and the protocol.
        .target(name: "ChatModel"),
        .systemLibrary(
            name: "CSQLite",
            pkgConfig: "sqlite3",
            providers: [.apt(["libsqlite3-dev"])]
        ),
        // Threads the operating system knows by name (top -H, perf, gdb), on Linux too.
        .target(name: "NamedThreads"),
        // The SQLite layer: connection, statements, value conversion, named result codes.
        .target(name: "SQLite", dependencies: ["CSQLite", "NamedThreads"]),
        .target(name: "ChatStore", dependencies: ["ChatModel", "SQLite", "NamedThreads"]),
        .target(name: "ChangeFeed", dependencies: ["ChatModel", "ListDiff"]),
        // Dependency-free: the JSON value, the parser and the byte writer.
        .target(name: "JSONCodec"),
        .target(name: "WireProtocol", dependencies: ["ChatModel", "JSONCodec", "ListDiff"]),
        // The engine: sessions, the store, the feed; requests in, lines out. Embeddable (in-process,
        // the daemon, a gateway): no process, stdio, service or configuration-file code in it.
        .target(
            name: "ChatfeedEngine",
            dependencies: [
                "ChatModel", "ChatStore", "SQLite", "ChangeFeed", "JSONCodec", "WireProtocol", "ListDiff", "NamedThreads",
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // The configuration file: reading, validating, and its mapping to the engine's options.
        .target(name: "ChatfeedConfig", dependencies: [
            "JSONCodec", "ChatStore", "ChangeFeed", "ChatfeedEngine", "ChatfeedGateway",
            .product(name: "Logging", package: "swift-log"),
        ]),
        // The WebSocket gateway (`chatfeedd --listen`): HTTP, token checks, one engine session per
        // connection as its token's user, health, metrics and the web client's files.
        .target(name: "ChatfeedGateway", dependencies: [
            "ChatfeedEngine", "JSONCodec", "WireProtocol",
            .product(name: "Hummingbird", package: "hummingbird"),
            .product(name: "NIOCore", package: "swift-nio"),
            .product(name: "NIOHTTP1", package: "swift-nio"),
            .product(name: "NIOWebSocket", package: "swift-nio"),
            .product(name: "NIOHTTPTypes", package: "swift-nio-extras"),
            .product(name: "NIOHTTPTypesHTTP1", package: "swift-nio-extras"),
            .product(name: "HTTPTypes", package: "swift-http-types"),
            .product(name: "JWTKit", package: "jwt-kit"),
            .product(name: "Metrics", package: "swift-metrics"),
            .product(name: "Prometheus", package: "swift-prometheus"),
            .product(name: "Logging", package: "swift-log"),
            .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
        ]),
        // The client half for apps: typed calls, the feed as validated updates, transports.
        .target(name: "ChatfeedClient", dependencies: [
            "ChatModel", "ListDiff", "JSONCodec", "WireProtocol", "ChatfeedEngine", "NamedThreads",
            .product(name: "Logging", package: "swift-log"),
            .product(name: "HummingbirdWSClient", package: "hummingbird-websocket", condition: .when(platforms: [.linux])),
        ]),
        // Applies a feed subscription to a table or collection view (UIKit conformances where UIKit exists).
        .target(name: "ChatfeedUIKit", dependencies: ["ChatfeedClient", "ChatModel", "ListDiff"]),
        // The daemon's shell: stdin/stdout as one engine session, signals, the service.
        .executableTarget(name: "chatfeedd", dependencies: [
            "ChatfeedEngine", "ChatfeedConfig", "ChatfeedGateway", "ChatModel", "ChatStore", "SQLite", "WireProtocol", "NamedThreads",
            .product(name: "ArgumentParser", package: "swift-argument-parser"),
            .product(name: "Logging", package: "swift-log"),
            .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
        ]),
        .executableTarget(name: "chatfeed", dependencies: [
            "ListDiff", "ChatModel", "ChatStore", "SQLite", "JSONCodec", "WireProtocol", "ChatfeedConfig", "ChatfeedEngine",
            "ChatfeedClient", "ChatfeedGateway",
            .product(name: "ArgumentParser", package: "swift-argument-parser"),
        ]),

        // Shared by the test targets: seeded random numbers and list generators.
        .target(name: "TestSupport", dependencies: ["ListDiff", "ChatModel"], path: "Tests/TestSupport"),
        .testTarget(name: "ListDiffTests", dependencies: ["ListDiff", "TestSupport"]),
        .testTarget(name: "ChatModelTests", dependencies: ["ChatModel", "TestSupport"]),
        .testTarget(name: "JSONCodecTests", dependencies: ["JSONCodec", "TestSupport"]),
        .testTarget(name: "NamedThreadsTests", dependencies: ["NamedThreads"]),
        .testTarget(name: "ChatStoreTests", dependencies: ["ChatStore", "SQLite", "ChatModel", "TestSupport"]),
        .testTarget(name: "ChangeFeedTests", dependencies: ["ChangeFeed", "ChatModel", "ListDiff", "TestSupport"]),
        .testTarget(name: "WireProtocolTests", dependencies: ["WireProtocol", "JSONCodec", "ChatModel", "ListDiff", "TestSupport"]),
        .testTarget(name: "ChatfeedConfigTests", dependencies: ["ChatfeedConfig", "TestSupport"]),
        .testTarget(name: "ChatfeedCLITests", dependencies: ["chatfeed", "chatfeedd", "ChatfeedConfig", "ChatStore", "ChatModel", "ListDiff", "JSONCodec", "WireProtocol", "TestSupport"]),
        .testTarget(name: "ChatfeedClientTests", dependencies: [
            "ChatfeedClient", "ChatfeedUIKit", "ChatModel", "ListDiff", "JSONCodec", "WireProtocol", "TestSupport", "chatfeedd",
        ]),
        .testTarget(name: "ChatfeedEngineTests", dependencies: [
            "ChatfeedEngine", "ChatfeedConfig", "ChatStore", "ChatModel", "JSONCodec", "ListDiff", "SQLite", "WireProtocol", "TestSupport",
        ]),
        .testTarget(name: "ChatfeedGatewayTests", dependencies: [
            "ChatfeedGateway", "ChatfeedEngine", "ChatfeedClient", "ChatfeedConfig", "ChatModel", "ListDiff", "JSONCodec",
            "WireProtocol", "TestSupport", "chatfeedd",
            "ChatStore",
            .product(name: "HummingbirdWSClient", package: "hummingbird-websocket"),
            .product(name: "Hummingbird", package: "hummingbird"),
            .product(name: "JWTKit", package: "jwt-kit"),
            .product(name: "NIOCore", package: "swift-nio"),
            .product(name: "NIOWebSocket", package: "swift-nio"),
            .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            .product(name: "Logging", package: "swift-log"),
        ]),
        .testTarget(name: "ChatfeedServerTests", dependencies: [
            "ChatfeedConfig", "ChatStore", "ChatModel", "ListDiff", "JSONCodec", "WireProtocol", "TestSupport",
        ]),
    ]
)
