import ChangeFeed
import ChatStore
import ChatfeedEngine
import ChatfeedGateway

/// Every setting of `chatfeedd` and `chatfeed`, with its default (docs/CONFIGURATION.md).
///
/// The JSON keys of a configuration file are the property names. Each key is described once, in
/// `ChatfeedConfiguration.table` (name, type, default, range, description), which drives reading
/// and validating a file, writing `Config/chatfeed.json` and docs/CONFIGURATION.md's table.
/// The defaults are the option types' own (`EngineOptions`, `StoreOptions`, `FeedOptions`), so an
/// embedder who builds options in code gets the values the daemon gets.
public struct ChatfeedConfiguration: Hashable, Sendable {
    /// SQLite's `synchronous` setting (the store's own type).
    public typealias Durability = StoreOptions.Durability

    /// The levels of swift-log, by name.
    public enum LogLevel: String, CaseIterable, Hashable, Sendable {
        case trace, debug, info, notice, warning, error, critical
    }

    private static let engine = EngineOptions(databasePath: defaultDatabase)
    /// The database file of a configuration that names none.
    public static let defaultDatabase = "chatfeed.sqlite"

    public var database = defaultDatabase
    public var busyTimeoutMilliseconds = engine.store.busyTimeoutMilliseconds
    public var durability = engine.store.durability
    public var cacheSizeKiB = engine.store.cacheSizeKiB ?? 0
    public var pollIntervalMilliseconds = engine.pollIntervalMilliseconds
    public var maxLineBytes = engine.maxLineBytes
    public var defaultMaxInFlight = engine.feed.defaultMaxInFlight
    public var resetThreshold = engine.feed.resetThreshold
    public var groupCommitMaxEvents = engine.groupCommitMaxEvents
    public var maxSubscriptions = engine.feed.maxSubscriptions
    public var maxPendingChats = engine.feed.maxPendingChats
    public var logLevel = LogLevel.info
    public var maxPinnedChats = engine.store.maxPinnedChats
    public var groupCommitMaxMilliseconds = engine.groupCommitMaxMilliseconds
    public var groupCommitLingerMicroseconds = engine.groupCommitLingerMicroseconds
    public var changeLogRetention = engine.store.changeLogRetention
    public var changeLogReaderTimeoutMilliseconds = engine.store.readerTimeoutMilliseconds
    public var quickCheckAtStart = engine.quickCheckAtStart
    public var skipQuickCheckAfterCleanStop = engine.skipQuickCheckAfterCleanStop
    public var maxDatabaseMiB = Int((engine.store.maxDatabaseBytes ?? 0) >> 20)
    public var checkpointIntervalMilliseconds = engine.checkpointIntervalMilliseconds
    public var sessionOutputLimitBytes = engine.sessionOutputLimitBytes
    public var maxSubscriptionsPerConnection = engine.maxSubscriptionsPerConnection
    public var defaultUser = engine.defaultUser
    public var idleUserIndexSeconds = engine.idleUserIndexSeconds
    public var tokenSecretFile = GatewayOptions.defaultTokenSecretFile
    public var pingIntervalSeconds = Int(GatewayOptions.defaultPingIntervalSeconds)
    public var maxConnections = GatewayOptions.defaultMaxConnections
    public var devTokens = GatewayOptions.defaultDevTokens
    public var webRoot = GatewayOptions.defaultWebRoot

    /// The built-in defaults (equal to `Config/chatfeed.json`).
    public init() {}

    public static let defaults = ChatfeedConfiguration()

    /// The keys of a configuration file, in the order they are written.
    public static var keys: [String] { table.map(\.name) }

    /// Every key once: what a file may hold, how it is checked, and what it means.
    public static let table: [ConfigurationKey] = [
        .string("database", \.database, "the SQLite file (relative to the current directory); created when missing"),
        .integer("busyTimeoutMilliseconds", \.busyTimeoutMilliseconds, 0...Int(Int32.max),
                 "how long a writer waits for another process's lock"),
        .choice("durability", \.durability,
                "`full`: every group commit is on the disk (`fsync`) before its writes are answered; `normal` (WAL, `synchronous=NORMAL`): fewer `fsync`s, but a power loss may lose the last answered commits (never corrupt the file)"),
        .integer("cacheSizeKiB", \.cacheSizeKiB, 0...Int(Int32.max), "SQLite page cache per connection, in KiB"),
        .integer("pollIntervalMilliseconds", \.pollIntervalMilliseconds, 1...60_000,
                 "how often the daemon looks for other processes' commits when inotify is unavailable (with inotify: once a second, as a safety net)"),
        .integer("maxLineBytes", \.maxLineBytes, 1...(1 << 30), "the longest request line (−32003 beyond it)"),
        .integer("defaultMaxInFlight", \.defaultMaxInFlight, 0...1_000_000, "`maxInFlight` of a subscription that gives none"),
        .number("resetThreshold", \.resetThreshold, minimum: 0,
                "reset only when a batch + its deferred batch would be larger on the wire than this × the reset (sizes estimated from counts)"),
        .integer("groupCommitMaxEvents", \.groupCommitMaxEvents, 1...1_000_000, "the most writes in one transaction"),
        .integer("maxSubscriptions", \.maxSubscriptions, 1...1_000_000,
                 "the most feed subscriptions a daemon serves, of all users and sessions (each costs its rows shown plus its user's live lists: about 10–14 KB for a top-20 window of a user in ten chats); one more is −32005 (limit reached)"),
        .integer("maxPendingChats", \.maxPendingChats, 1...100_000_000,
                 "the most changed chats a waiting subscription tracks one by one (and at most max(64, its rows ÷ 32)); beyond it, it keeps the rows it shows instead and computes its next batch from them (never a reset)"),
        .choice("logLevel", \.logLevel, "the least severe log level written to stderr"),
        .integer("maxPinnedChats", \.maxPinnedChats, 0...1000, "the most pinned chats a list holds; pinning one more is a conflict"),
        .integer("groupCommitMaxMilliseconds", \.groupCommitMaxMilliseconds, 1...60_000,
                 "the longest the daemon holds the write lock for one group commit; other processes' writers (the CLI) get the lock between groups"),
        .integer("groupCommitLingerMicroseconds", \.groupCommitLingerMicroseconds, 0...1_000_000,
                 "how long a group commit waits for more writes when they come while the daemon is busy (within this long of its last commit): fewer, larger commits under load, each write answered up to this much later; 0 commits at once. A write after a pause is never delayed"),
        .integer("changeLogRetention", \.changeLogRetention, 1...Int(Int32.max),
                 "change-log entries always kept; older ones are pruned once every live daemon on the file has read them"),
        .integer("changeLogReaderTimeoutMilliseconds", \.changeLogReaderTimeoutMilliseconds, 1...Int(Int32.max),
                 "a daemon silent for this long (stopped, suspended) no longer holds pruning back; if it comes back after a prune it reloads and sends `feed.reset`"),
        .boolean("quickCheckAtStart", \.quickCheckAtStart,
                 "run `PRAGMA quick_check` at start: the daemon runs it beside the load (reads are answered meanwhile, the first write waits for it, a damaged database gets no write: −32006, exit status 1); every `chatfeed` command runs it first and refuses a damaged database"),
        .boolean("skipQuickCheckAfterCleanStop", \.skipQuickCheckAfterCleanStop,
                 "skip that check when the file is exactly as the last clean stop of a daemon that knew it sound left it (its record `DATABASE-cleanstop`: the same inode, size, modification and change times, no `-wal` content), so no write reached it since; after a crash, another process's write, a copy or a restore the check runs. `false`: check at every start (damage at rest that leaves the file's times alone, a failing disk's, is found only so)"),
        .integer("maxDatabaseMiB", \.maxDatabaseMiB, 0...Int(Int32.max),
                 "the largest the database may grow (0: no limit); beyond it writes fail with −32004 storage full, as on a full disk"),
        .integer("checkpointIntervalMilliseconds", \.checkpointIntervalMilliseconds, 1...60_000,
                 "how long after a commit the daemon copies the write-ahead log into the database file (on a thread of its own, with every commit made meanwhile); longer copies a page that many commits changed once and lets the `-wal` file grow larger meanwhile (past three quarters of the daemon's own checkpoint point, 14,336 pages, it copies at once)"),
        .integer("sessionOutputLimitBytes", \.sessionOutputLimitBytes, 1024...Int(Int32.max),
                 "the most output an in-process or WebSocket session may leave unsent; beyond it the engine holds that session's requests until it reads on (other sessions go on)"),
        .integer("maxSubscriptionsPerConnection", \.maxSubscriptionsPerConnection, 1...1_000_000,
                 "the most feed subscriptions one WebSocket connection (a user session) holds; one more is −32005 (limit reached). Trusted sessions are bound by `maxSubscriptions` only"),
        .string("defaultUser", \.defaultUser,
                "the user a trusted session's request acts as when it names none (the `user` param); a single-account database has one user, `me`"),
        .integer("idleUserIndexSeconds", \.idleUserIndexSeconds, 0...86_400,
                 "how long the daemon keeps a user's live chat lists after their last subscription ended (0: dropped at once); a user with none costs no memory, and their `chats.list` reads the database"),
        .string("tokenSecretFile", \.tokenSecretFile,
                "the gateway's (`chatfeedd --listen`) HS256 token secret, in a file (surrounding whitespace trimmed); a gateway without a readable one refuses to start"),
        .integer("pingIntervalSeconds", \.pingIntervalSeconds, 1...3600,
                 "the gateway pings every WebSocket this often; a ping not answered within twice this (by a pong or any other frame) closes the connection (1001), so a client may stop reading for up to two intervals"),
        .integer("maxConnections", \.maxConnections, 1...1_000_000,
                 "the most WebSocket connections the gateway holds; one more is HTTP 503"),
        .boolean("devTokens", \.devTokens,
                 "the gateway serves `GET /dev/token?user=U` (a token for any user: development machines only)"),
        .string("webRoot", \.webRoot,
                "the directory the gateway serves at `/` (the web client), relative to the current directory; missing: 404s"),
    ]

    /// The key of `name`, if any.
    public static func key(_ name: String) -> ConfigurationKey? { table.first { $0.name == name } }

    /// The configuration as a JSON file: every key, one per line, in `table` order.
    public var jsonText: String {
        let lines = Self.table.map { "  \"\($0.name)\": \($0.jsonText(of: self))" }
        return "{\n" + lines.joined(separator: ",\n") + "\n}\n"
    }

    /// docs/CONFIGURATION.md's table (Markdown), generated from `table`.
    public static var markdownTable: String {
        var text = "| key | type | default | range | meaning |\n| --- | --- | --- | --- | --- |\n"
        for key in table {
            text += "| `\(key.name)` | \(key.typeName) | \(key.markdownDefault) | \(key.rangeText) | \(key.summary) |\n"
        }
        return text
    }
}
