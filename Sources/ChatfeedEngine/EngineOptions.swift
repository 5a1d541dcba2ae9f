import ChangeFeed
import ChatModel
import ChatStore

/// Everything the engine needs to know to run. The daemon fills it from the configuration file
/// and the command line (ChatfeedConfig); an embedder builds it in code and gets the same
/// defaults as the daemon (the configuration table reads its defaults from here).
public struct EngineOptions: Sendable {
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
    /// The longest the engine holds the write lock for one group commit, so that other
    /// processes' writers get in between groups.
    public var groupCommitMaxMilliseconds: Int
    /// How long a group commit waits for more writes, in microseconds, when its writes came
    /// while the engine was busy (within this long of its last commit): 0 commits at once. A
    /// write after a pause is never delayed.
    public var groupCommitLingerMicroseconds: Int
    /// Run `PRAGMA quick_check` at start, on a thread of its own beside the load: reads are
    /// answered meanwhile, nothing is written before it passes, and a damaged database gets no
    /// write (`ChatEngine.lostDatabase`; docs/DECISIONS.md, "The quick check beside the start").
    public var quickCheckAtStart: Bool
    /// With `quickCheckAtStart`, skip the check when the file is exactly as the last clean stop
    /// left it, with the check passed (`CleanStopRecord`: no write reached it since); false checks
    /// at every start (docs/DECISIONS.md, "The quick check after a clean stop").
    public var skipQuickCheckAfterCleanStop: Bool
    /// How long after a commit the background checkpoint copies the write-ahead log into the
    /// database: pages changed by several commits in between are copied once.
    public var checkpointIntervalMilliseconds: Int
    /// How large the write-ahead log may grow, in pages, before the background checkpoint runs
    /// without waiting for `checkpointIntervalMilliseconds`, and again after each commit until
    /// the writer's own checkpoint starts the log over: nil for three quarters of the writer's
    /// automatic checkpoint point (`StoreOptions.autoCheckpointPages`), 0 for never. Not a
    /// configuration key: the point follows the writer's (docs/DECISIONS.md, "The checkpointer
    /// syncs what it copied").
    public var checkpointEarlyPages: Int?
    /// The most output bytes an in-process session may leave unread: past it, the engine stops
    /// handling that session's requests until its reader catches up (other sessions go on).
    public var sessionOutputLimitBytes: Int
    /// The most subscriptions one user session (a WebSocket) holds at once; one more is −32005
    /// (limit reached), so that one user's connection cannot take every subscription of the
    /// daemon (`FeedOptions.maxSubscriptions`). Trusted sessions are bound by that limit only.
    public var maxSubscriptionsPerConnection: Int
    /// The user a trusted session's request acts as when it names none (`user` param).
    public var defaultUser: String
    /// How long a user's live chat lists are kept after their last subscription ended, in
    /// seconds (0: dropped at once). A user with no live lists costs the engine no memory; their
    /// `chats.list` and `chats.locate` read the store.
    public var idleUserIndexSeconds: Int
    /// Called on the engine's sync thread before each group commit's sync (with `durability`
    /// full); an error it throws fails that sync as the disk's would. Not a configuration key:
    /// tests hold a sync here, or fail it. Nil: nothing.
    public var logSyncWillBegin: (@Sendable () throws -> Void)?
    /// A group commit of at least this many writes runs the feed work of the group before it
    /// (its changes applied to the live lists, the batches and their JSON) on a thread of its
    /// own beside its statements (docs/DECISIONS.md, "A group's feed work beside the next
    /// group's statements"); a smaller group runs it first, on the engine thread (two threads'
    /// hand-over costs more than such a group's statements take). Nil: always on the engine
    /// thread. Not a configuration key: the lists and batches are the same either way (tests
    /// run both).
    public var feedWorkBesideMinimumWrites: Int?

    /// The defaults, one place: `Config/chatfeed.json` and the README's table are checked against them.
    public static let defaultPollIntervalMilliseconds = 20
    public static let defaultMaxLineBytes = 1 << 20
    public static let defaultGroupCommitMaxEvents = 1000
    public static let defaultGroupCommitMaxMilliseconds = 20
    public static let defaultGroupCommitLingerMicroseconds = 0
    public static let defaultQuickCheckAtStart = true
    public static let defaultSkipQuickCheckAfterCleanStop = true
    public static let defaultCheckpointIntervalMilliseconds = 1000
    public static let defaultSessionOutputLimitBytes = 4 << 20
    public static let defaultMaxSubscriptionsPerConnection = 64
    /// The one user of a single-account database (`User.defaultID`, "me").
    public static let defaultDefaultUser = User.defaultID
    public static let defaultIdleUserIndexSeconds = 60
    /// At 5,000 posts/s a group holds one or two writes: handing each one's feed work over took
    /// 205 µs of CPU a post against 185 on one thread (Benchmarks/Results/daemon.md, 2026-12-07).
    public static let defaultFeedWorkBesideMinimumWrites = 8
    /// The store of an engine that names none: `StoreOptions()`, the configuration's defaults
    /// (every commit on the disk before it is answered, a 64 MiB page cache).
    public static let defaultStore = StoreOptions()

    public init(
        databasePath: String, store: StoreOptions = defaultStore, feed: FeedOptions = FeedOptions(),
        pollIntervalMilliseconds: Int = defaultPollIntervalMilliseconds, maxLineBytes: Int = defaultMaxLineBytes,
        groupCommitMaxEvents: Int = defaultGroupCommitMaxEvents,
        groupCommitMaxMilliseconds: Int = defaultGroupCommitMaxMilliseconds,
        groupCommitLingerMicroseconds: Int = defaultGroupCommitLingerMicroseconds,
        quickCheckAtStart: Bool = defaultQuickCheckAtStart,
        skipQuickCheckAfterCleanStop: Bool = defaultSkipQuickCheckAfterCleanStop,
        checkpointIntervalMilliseconds: Int = defaultCheckpointIntervalMilliseconds,
        checkpointEarlyPages: Int? = nil,
        sessionOutputLimitBytes: Int = defaultSessionOutputLimitBytes,
        maxSubscriptionsPerConnection: Int = defaultMaxSubscriptionsPerConnection,
        defaultUser: String = defaultDefaultUser,
        idleUserIndexSeconds: Int = defaultIdleUserIndexSeconds
    ) {
        self.databasePath = databasePath
        self.store = store
        self.feed = feed
        self.pollIntervalMilliseconds = pollIntervalMilliseconds
        self.maxLineBytes = maxLineBytes
        self.groupCommitMaxEvents = groupCommitMaxEvents
        self.groupCommitMaxMilliseconds = groupCommitMaxMilliseconds
        self.groupCommitLingerMicroseconds = groupCommitLingerMicroseconds
        self.quickCheckAtStart = quickCheckAtStart
        self.skipQuickCheckAfterCleanStop = skipQuickCheckAfterCleanStop
        self.checkpointIntervalMilliseconds = checkpointIntervalMilliseconds
        self.checkpointEarlyPages = checkpointEarlyPages
        self.sessionOutputLimitBytes = sessionOutputLimitBytes
        self.maxSubscriptionsPerConnection = maxSubscriptionsPerConnection
        self.defaultUser = defaultUser
        self.idleUserIndexSeconds = idleUserIndexSeconds
        feedWorkBesideMinimumWrites = Self.defaultFeedWorkBesideMinimumWrites
    }
}
