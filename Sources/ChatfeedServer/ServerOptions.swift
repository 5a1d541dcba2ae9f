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

    public init(
        databasePath: String, store: StoreOptions = StoreOptions(), feed: FeedOptions = FeedOptions(),
        pollIntervalMilliseconds: Int = 20, maxLineBytes: Int = 1 << 20, groupCommitMaxEvents: Int = 1000
    ) {
        self.databasePath = databasePath
        self.store = store
        self.feed = feed
        self.pollIntervalMilliseconds = pollIntervalMilliseconds
        self.maxLineBytes = maxLineBytes
        self.groupCommitMaxEvents = groupCommitMaxEvents
    }
}

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
            groupCommitMaxEvents: configuration.groupCommitMaxEvents)
    }
}

extension ChatfeedConfiguration {
    /// How the store opens its connection under this configuration.
    public var storeOptions: StoreOptions {
        StoreOptions(
            busyTimeoutMilliseconds: busyTimeoutMilliseconds,
            durability: durability == .full ? .full : .normal,
            cacheSizeKiB: cacheSizeKiB, maxPinnedChats: maxPinnedChats)
    }

    /// The swift-log level of `logLevel`.
    public var loggerLevel: Logger.Level { Logger.Level(rawValue: logLevel.rawValue) ?? .info }
}
