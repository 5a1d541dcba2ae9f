import ChangeFeed
import ChatfeedConfig
import Logging
import ChatStore

/// Everything the daemon needs to know to run (the executable fills it from the configuration
/// file and the command line).
public struct ServerOptions: Sendable {
    public var databasePath: String
    public var store: StoreOptions
    public var feed: FeedOptions
    /// How often to look for commits by other processes (PRAGMA data_version) where inotify is
    /// unavailable, in milliseconds.
    public var pollIntervalMilliseconds: Int
    /// The longest request line accepted, in bytes.
    public var maxLineBytes: Int
    /// The most writes committed in one transaction.
    public var groupCommitMaxEvents: Int
    /// The longest the daemon holds the write lock for one group commit, so that other
    /// processes' writers get in between groups.
    public var groupCommitMaxMilliseconds: Int
    /// Run `PRAGMA quick_check` at start and refuse a damaged database.
    public var quickCheckAtStart: Bool
    /// How long after a commit the background checkpoint copies the write-ahead log into the
    /// database: pages changed by several commits in between are copied once.
    public var checkpointIntervalMilliseconds: Int

    public init(
        databasePath: String, store: StoreOptions = StoreOptions(), feed: FeedOptions = FeedOptions(),
        pollIntervalMilliseconds: Int = 20, maxLineBytes: Int = 1 << 20, groupCommitMaxEvents: Int = 1000,
        groupCommitMaxMilliseconds: Int = 20, quickCheckAtStart: Bool = true,
        checkpointIntervalMilliseconds: Int = 1000
    ) {
        self.databasePath = databasePath
        self.store = store
        self.feed = feed
        self.pollIntervalMilliseconds = pollIntervalMilliseconds
        self.maxLineBytes = maxLineBytes
        self.groupCommitMaxEvents = groupCommitMaxEvents
        self.groupCommitMaxMilliseconds = groupCommitMaxMilliseconds
        self.quickCheckAtStart = quickCheckAtStart
        self.checkpointIntervalMilliseconds = checkpointIntervalMilliseconds
    }
}

// The one mapping from a configuration to the options of the store, the feed and the server:
// chatfeedd and the chatfeed CLI both go through it.

extension ServerOptions {
    /// The options a configuration gives (its database path included).
    public init(configuration: ChatfeedConfiguration) {
        self.init(
            databasePath: configuration.database,
            store: configuration.storeOptions,
            feed: FeedOptions(
                defaultMaxInFlight: configuration.defaultMaxInFlight, resetThreshold: configuration.resetThreshold,
                maxSubscriptions: configuration.maxSubscriptions, maxPendingChats: configuration.maxPendingChats),
            pollIntervalMilliseconds: configuration.pollIntervalMilliseconds,
            maxLineBytes: configuration.maxLineBytes,
            groupCommitMaxEvents: configuration.groupCommitMaxEvents,
            groupCommitMaxMilliseconds: configuration.groupCommitMaxMilliseconds,
            quickCheckAtStart: configuration.quickCheckAtStart,
            checkpointIntervalMilliseconds: configuration.checkpointIntervalMilliseconds)
    }
}

extension ChatfeedConfiguration {
    /// How the store opens its connection under this configuration.
    public var storeOptions: StoreOptions {
        StoreOptions(
            busyTimeoutMilliseconds: busyTimeoutMilliseconds,
            durability: durability == .full ? .full : .normal,
            cacheSizeKiB: cacheSizeKiB, maxPinnedChats: maxPinnedChats,
            changeLogRetention: changeLogRetention,
            readerTimeoutMilliseconds: changeLogReaderTimeoutMilliseconds,
            maxDatabaseBytes: maxDatabaseMiB == 0 ? nil : Int64(maxDatabaseMiB) << 20)
    }

    /// The swift-log level of `logLevel`.
    public var loggerLevel: Logger.Level { Logger.Level(rawValue: logLevel.rawValue) ?? .info }
}
