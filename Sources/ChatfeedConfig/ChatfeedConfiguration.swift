/// Every setting of `chatfeedd` and `chatfeed`, with its default (SPEC §7).
///
/// The JSON keys of a configuration file are the property names. `Config/chatfeed.json` holds
/// every default; command-line flags override the file by setting the properties.
public struct ChatfeedConfiguration: Hashable, Sendable {
    /// SQLite's `synchronous` setting. `full` (the default): a commit is on the disk before it is
    /// answered, as SPEC §5 asks. `normal`: in WAL mode a power loss may lose the latest commits
    /// (never corrupt the file), for fewer `fsync`s.
    public enum Durability: String, CaseIterable, Hashable, Sendable {
        case normal
        case full
    }

    /// The levels of swift-log, by name.
    public enum LogLevel: String, CaseIterable, Hashable, Sendable {
        case trace, debug, info, notice, warning, error, critical
    }

    /// The SQLite database file; created when missing.
    public var database = "chatfeed.sqlite"
    /// How long a write waits for another process's lock before failing.
    public var busyTimeoutMilliseconds = 5000
    public var durability = Durability.full
    /// SQLite's page cache, in KiB.
    public var cacheSizeKiB = 65536
    /// How often the daemon looks for other processes' writes where inotify is unavailable (with
    /// inotify it wakes on their commits and polls only once a second as a safety net).
    public var pollIntervalMilliseconds = 20
    /// The longest request line accepted (−32003 beyond it).
    public var maxLineBytes = 1_048_576
    /// `maxInFlight` of a subscription that does not choose one.
    public var defaultMaxInFlight = 1
    /// The daemon sends `feed.reset` instead of a batch and its deferred batch when they would be
    /// larger on the wire than `resetThreshold ×` the reset (sizes estimated from counts).
    public var resetThreshold = 1.5
    /// The most events committed in one transaction (group commit).
    public var groupCommitMaxEvents = 1000
    /// The most feed subscriptions a daemon serves at once (−32005 beyond).
    public var maxSubscriptions = 256
    /// The most changed chats a waiting window subscription tracks (at least 2 × its window);
    /// beyond that its next notification is a `feed.reset` of its window.
    public var maxPendingChats = 1000
    public var logLevel = LogLevel.info
    /// The most pinned chats a list holds; pinning one more is a conflict.
    public var maxPinnedChats = 5
    /// The longest the daemon holds the write lock for one group commit; other processes'
    /// writers (the CLI) get the lock between groups.
    public var groupCommitMaxMilliseconds = 20
    /// Change-log entries always kept; older ones are pruned once every live reader has read them.
    public var changeLogRetention = 100_000
    /// A daemon that has not shown a sign of life for this long no longer holds back the
    /// pruning of the change log (it reloads and sends resets if it comes back after a prune).
    public var changeLogReaderTimeoutMilliseconds = 30_000
    /// Run `PRAGMA quick_check` when the daemon starts, and refuse a damaged database (about a
    /// second per GB; turn it off for very large files).
    public var quickCheckAtStart = true
    /// The largest the database file may grow, in MiB (0: no limit); beyond it writes fail with
    /// −32004 storage full, as on a full disk.
    public var maxDatabaseMiB = 0
    /// How long after a commit the daemon's background checkpoint copies the write-ahead log into
    /// the database file; longer copies a page changed by many commits once (fewer bytes written)
    /// and lets the `-wal` file grow larger in between.
    public var checkpointIntervalMilliseconds = 1000

    /// The built-in defaults (equal to `Config/chatfeed.json`).
    public init() {}

    public static let defaults = ChatfeedConfiguration()

    /// The keys of a configuration file, in the order they are written.
    public static let keys = [
        "database", "busyTimeoutMilliseconds", "durability", "cacheSizeKiB", "pollIntervalMilliseconds",
        "maxLineBytes", "defaultMaxInFlight", "resetThreshold", "groupCommitMaxEvents", "maxSubscriptions",
        "maxPendingChats", "logLevel", "maxPinnedChats",
        "groupCommitMaxMilliseconds", "changeLogRetention", "changeLogReaderTimeoutMilliseconds",
        "quickCheckAtStart", "maxDatabaseMiB", "checkpointIntervalMilliseconds",
    ]

    /// The allowed range of each integer key.
    public static let integerRanges: [String: ClosedRange<Int>] = [
        "busyTimeoutMilliseconds": 0...Int(Int32.max),
        "cacheSizeKiB": 0...Int(Int32.max),
        "pollIntervalMilliseconds": 1...60_000,
        "maxLineBytes": 1...(1 << 30),
        "defaultMaxInFlight": 0...1_000_000,
        "groupCommitMaxEvents": 1...1_000_000,
        "maxSubscriptions": 1...1_000_000,
        "maxPendingChats": 1...100_000_000,
        "maxPinnedChats": 0...1000,
        "groupCommitMaxMilliseconds": 1...60_000,
        "changeLogRetention": 1...Int(Int32.max),
        "changeLogReaderTimeoutMilliseconds": 1...Int(Int32.max),
        "maxDatabaseMiB": 0...Int(Int32.max),
        "checkpointIntervalMilliseconds": 1...60_000,
    ]

    /// The configuration as a JSON file: every key, one per line, in `keys` order.
    public var jsonText: String {
        func quoted(_ string: String) -> String {
            var result = "\""
            for scalar in string.unicodeScalars {
                switch scalar {
                case "\"": result += "\\\""
                case "\\": result += "\\\\"
                case "\n": result += "\\n"
                case "\r": result += "\\r"
                case "\t": result += "\\t"
                case _ where scalar.value < 0x20:
                    let hex = String(scalar.value, radix: 16)
                    result += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
                default: result.unicodeScalars.append(scalar)
                }
            }
            return result + "\""
        }
        let values: [String] = [
            quoted(database), String(busyTimeoutMilliseconds), quoted(durability.rawValue), String(cacheSizeKiB),
            String(pollIntervalMilliseconds), String(maxLineBytes), String(defaultMaxInFlight),
            String(resetThreshold), String(groupCommitMaxEvents), String(maxSubscriptions), String(maxPendingChats),
            quoted(logLevel.rawValue), String(maxPinnedChats),
            String(groupCommitMaxMilliseconds), String(changeLogRetention), String(changeLogReaderTimeoutMilliseconds),
            String(quickCheckAtStart), String(maxDatabaseMiB), String(checkpointIntervalMilliseconds),
        ]
        let lines = zip(Self.keys, values).map { "  \"\($0)\": \($1)" }
        return "{\n" + lines.joined(separator: ",\n") + "\n}\n"
    }
}
