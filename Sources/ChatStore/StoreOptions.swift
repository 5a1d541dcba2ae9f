/// How a `ChatDatabase` opens and tunes its connection.
public struct StoreOptions: Sendable, Hashable {
    /// How a commit reaches the disk.
    public enum Durability: String, Sendable, Hashable, CaseIterable {
        /// `PRAGMA synchronous = NORMAL`: in WAL mode a power loss may lose the latest commits,
        /// never corrupt the file.
        case normal
        /// `PRAGMA synchronous = FULL`: every commit is on the disk before it returns.
        case full
    }

    /// How long a writer waits for another process's lock before failing with SQLITE_BUSY.
    public var busyTimeoutMilliseconds: Int
    public var durability: Durability
    /// The page cache of the connection in KiB; nil keeps SQLite's default (2 MiB).
    public var cacheSizeKiB: Int?
    /// The durability of a store that names none, the daemon's and the configuration's: every
    /// commit on the disk before it returns (the protocol answers a write only once durable).
    public static let defaultDurability = Durability.full
    /// The page cache of a store that names none (64 MiB), the daemon's and the configuration's.
    public static let defaultCacheSizeKiB = 64 << 10
    /// Opens the file read-only: no migration, every write fails.
    public var readOnly: Bool
    /// The WAL size in pages at which a commit checkpoints on the committing thread
    /// (`PRAGMA wal_autocheckpoint`); nil keeps SQLite's 1,000. A writer that checkpoints in a
    /// `BackgroundCheckpointer` sets it high, as a backstop.
    public var autoCheckpointPages: Int?
    /// The most pinned chats a list holds (docs/PROTOCOL.md, Values).
    public var maxPinnedChats: Int
    /// How many of the latest change-log entries are always kept. Older ones are pruned (by the
    /// writes of this store) once no live reader still needs them.
    public var changeLogRetention: Int
    /// A registered change-log reader that has not shown a sign of life for this long is dead:
    /// its position no longer holds back pruning (it finds a gap when it comes back).
    public var readerTimeoutMilliseconds: Int
    /// The largest the database file may grow, in bytes (`PRAGMA max_page_count`); a write beyond
    /// it fails with `ChatStoreError.storageFull`, as on a full disk. Nil: no limit.
    public var maxDatabaseBytes: Int64?
    /// With `durability` `.full`, a commit returns before its `fsync` (`synchronous = NORMAL`),
    /// and the caller makes it durable with `ChatDatabase.writeAheadLog()`'s `sync()` before it
    /// reports it: the engine does so on a thread of its own, reading meanwhile, while a
    /// subscriber waits for an ack (docs/DECISIONS.md, "A group's sync runs beside the engine").
    /// Other writes of the connection (a change-log reader's position) are synced with the next
    /// one.
    public var callerSyncsCommits: Bool

    public init(
        busyTimeoutMilliseconds: Int = 5000, durability: Durability = defaultDurability,
        cacheSizeKiB: Int? = defaultCacheSizeKiB, readOnly: Bool = false, autoCheckpointPages: Int? = nil,
        maxPinnedChats: Int = 5,
        changeLogRetention: Int = 100_000, readerTimeoutMilliseconds: Int = 30_000,
        maxDatabaseBytes: Int64? = nil, callerSyncsCommits: Bool = false
    ) {
        self.maxPinnedChats = maxPinnedChats
        self.busyTimeoutMilliseconds = busyTimeoutMilliseconds
        self.durability = durability
        self.cacheSizeKiB = cacheSizeKiB
        self.readOnly = readOnly
        self.autoCheckpointPages = autoCheckpointPages
        self.changeLogRetention = changeLogRetention
        self.readerTimeoutMilliseconds = readerTimeoutMilliseconds
        self.maxDatabaseBytes = maxDatabaseBytes
        self.callerSyncsCommits = callerSyncsCommits
    }
}
