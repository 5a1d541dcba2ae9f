import ChatModel
import SQLite

/// The persistent store of chats and messages (SPEC §2) over one SQLite connection.
///
/// Every event runs in a `BEGIN IMMEDIATE` transaction and appends one change-log row per chat
/// row it changes, so that other processes can follow the changes. Several processes may share
/// one file: a writer that finds it locked waits up to the busy timeout.
///
/// Not Sendable: a store belongs to one owner for its whole life, like its connection.
public final class ChatDatabase {
    let db: Database
    /// The statements of the event path, prepared once.
    let statements: PreparedStatements
    public let path: String
    public let options: StoreOptions
    /// Called inside a group-commit transaction just before it commits (tests use it to stop a
    /// group half-way).
    var beforeCommit: (() throws -> Void)?
    /// This store's registration as a change-log reader, if any.
    var reader: ChangeLogReader?
    /// The file opened at `path` (nil for an in-memory or temporary database): writes stop when
    /// `path` no longer names it (`checkFileIdentity()`).
    let fileIdentity: FileIdentity?

    /// Opens the store at `path`, creating the file when it is missing and migrating its schema.
    public init(path: String, options: StoreOptions = .init()) throws {
        self.path = path
        self.options = options
        db = try Database(path: path, mode: .init(readOnly: options.readOnly, create: true))
        fileIdentity = FileIdentity(path: path)
        do {
            try Self.configure(db, path: path, options: options)
        } catch var error as SQLiteError where error.resultCode == .notADatabase {
            error.message = "'\(path)' is not a SQLite database"
            throw error
        } catch let error as SQLiteError where !options.readOnly && [.readOnly, .cantOpen].contains(error.resultCode) {
            throw Self.notWritable(path: path, error)
        }
        statements = try PreparedStatements(db)
    }

    private static func configure(_ db: Database, path: String, options: StoreOptions) throws {
        db.setBusyTimeout(milliseconds: options.busyTimeoutMilliseconds)
        try db.execute("PRAGMA foreign_keys = ON")
        // Each event's savepoint keeps a sub-journal; in a temporary file it costs a write call
        // per page (issue 18: 51 KB handed to write calls per post instead of 6.4 KB).
        try db.execute("PRAGMA temp_store = MEMORY")
        if let cacheSizeKiB = options.cacheSizeKiB {
            try db.execute("PRAGMA cache_size = -\(max(cacheSizeKiB, 1))")
        }
        if let bytes = options.maxDatabaseBytes {
            let pageSize = try db.cachedStatement("PRAGMA page_size").fetchValue(Int64.self) ?? 4096
            try db.execute("PRAGMA max_page_count = \(max(bytes / max(pageSize, 512), 1))")
        }
        if options.readOnly {
            let version = try schemaVersion(db)
            if version > latestSchemaVersion {
                throw ChatStoreError.schemaTooNew(path: path, version: version, supported: latestSchemaVersion)
            }
            if version < latestSchemaVersion {
                throw ChatStoreError.schemaOutdated(path: path, version: version, required: latestSchemaVersion)
            }
        } else {
            try db.execute("PRAGMA journal_mode = WAL", retryingWhileBusyFor: options.busyTimeoutMilliseconds)
            try db.execute("PRAGMA synchronous = \(options.durability == .full ? "FULL" : "NORMAL")")
            if let pages = options.autoCheckpointPages {
                try db.execute("PRAGMA wal_autocheckpoint = \(max(pages, 0))")
            }
            try configureLogBounds(db, options: options)
            try migrate(db)
        }
    }
}
