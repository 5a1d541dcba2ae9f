import ChangeFeed
import ChatStore
import ChatfeedEngine
import Logging

// The one mapping from a configuration to the options of the store, the feed and the engine:
// chatfeedd and the chatfeed CLI both go through it.

extension ChatfeedConfiguration {
    /// The engine's options under this configuration (its database path included).
    public var engineOptions: EngineOptions {
        EngineOptions(
            databasePath: database,
            store: storeOptions,
            feed: FeedOptions(
                defaultMaxInFlight: defaultMaxInFlight, resetThreshold: resetThreshold,
                maxSubscriptions: maxSubscriptions, maxPendingChats: maxPendingChats),
            pollIntervalMilliseconds: pollIntervalMilliseconds,
            maxLineBytes: maxLineBytes,
            groupCommitMaxEvents: groupCommitMaxEvents,
            groupCommitMaxMilliseconds: groupCommitMaxMilliseconds,
            groupCommitLingerMicroseconds: groupCommitLingerMicroseconds,
            quickCheckAtStart: quickCheckAtStart,
            skipQuickCheckAfterCleanStop: skipQuickCheckAfterCleanStop,
            checkpointIntervalMilliseconds: checkpointIntervalMilliseconds,
            sessionOutputLimitBytes: sessionOutputLimitBytes,
            maxSubscriptionsPerConnection: maxSubscriptionsPerConnection,
            defaultUser: defaultUser,
            idleUserIndexSeconds: idleUserIndexSeconds)
    }

    /// How the store opens its connection under this configuration.
    public var storeOptions: StoreOptions {
        StoreOptions(
            busyTimeoutMilliseconds: busyTimeoutMilliseconds,
            durability: durability,
            cacheSizeKiB: cacheSizeKiB, maxPinnedChats: maxPinnedChats,
            changeLogRetention: changeLogRetention,
            readerTimeoutMilliseconds: changeLogReaderTimeoutMilliseconds,
            maxDatabaseBytes: maxDatabaseMiB == 0 ? nil : Int64(maxDatabaseMiB) << 20)
    }

    /// The swift-log level of `logLevel`.
    public var loggerLevel: Logger.Level { Logger.Level(rawValue: logLevel.rawValue) ?? .info }
}
