import ChatModel
import Foundation
import SQLite

/// The persistent store of chats and messages (docs/PROTOCOL.md, Values) over one SQLite connection.
///
/// Every event runs in a `BEGIN IMMEDIATE` transaction and appends one change-log row per chat
/// row it changes, so that other processes can follow the changes. Several processes may share
/// one file: a writer that finds it locked waits up to the busy timeout.
///
/// Not Sendable: a store belongs to one owner for its whole life, like its connection.
public final class ChatDatabase {
    /// The connection; replaced once, by a read-write one, when a store opened on a full disk
    /// finds space again (`reopenForWritingIfSpaceFreed()`).
    private(set) var db: Database
    /// The statements of the event path, prepared once per connection.
    private(set) var statements: PreparedStatements
    public let path: String
    public let options: StoreOptions
    /// Called inside a group-commit transaction just before it commits (tests use it to stop a
    /// group half-way).
    var beforeCommit: (() throws -> Void)?
    /// Called inside a group-commit transaction after each event that applied (tests use it to
    /// refuse an event after it wrote).
    var afterEachEvent: ((ChatEvent) throws -> Void)?
    /// This store's registration as a change-log reader, if any.
    var reader: ChangeLogReader?
    /// The file opened at `path` (nil for an in-memory or temporary database): writes stop when
    /// `path` no longer names it (`checkFileIdentity()`).
    let fileIdentity: FileIdentity?
    /// True while the store runs on the read-only (immutable) connection it opened on a full
    /// disk: reads are served, and each write first tries to open the file for writing again
    /// (at most once a second), failing as storage full until there is room.
    public private(set) var openedOnFullDisk: Bool
    /// When the last try to open a full disk's store for writing was made.
    var lastReopenTry: ContinuousClock.Instant?
    /// How many times the store opened its file again (0 or 1).
    var reopenings = 0
    /// Messages read by walks along a chat's chain (`chainLink`), for tests.
    var chainSteps = 0
    /// The `-wal` file size past which the log has escaped its checkpoints and a write first
    /// empties it (`keepLogWithinSpace()`); nil when automatic checkpoints are off. Set by the
    /// store from its connection (tests lower it).
    var escapedLogBytes: Int64?
    /// The connection's automatic checkpoint point in pages, as opened (0: none).
    public internal(set) var autoCheckpointPages = 0
    /// Hears the log's size after each commit (`reportLogSize(afterEachCommit:)`).
    var logSizeReport: ((Int) -> Void)?
    /// Whether each group of events (`apply(_:lockLimit:)`) records its posts as it writes them
    /// (`ownPosts`). Off by default.
    public var recordsOwnPosts = false
    /// The changes of the last group applied, when `recordsOwnPosts` and every change-log entry
    /// it wrote is a post in order after its chat's newest message (nearly every post is); nil
    /// otherwise, or when it failed: then only the change log has them.
    public internal(set) var ownPosts: OwnPosts?
    /// The recording of the group being applied (nil: none, or not recording).
    var ownPostRecorder: OwnPostRecorder?
    /// The history's ends of the chats posted to in order, for the next post to each.
    var postStarts = PostStartCache()

    /// Opens the store at `path`, creating the file when it is missing and migrating its schema.
    /// Read-only, a database on read-only media (a read-only directory or mount, where SQLite
    /// cannot create its `-shm` file) opens immutable when no write-ahead log holds commits.
    ///
    /// - Throws: `ChatStoreError` naming the cause (`unusablePath`, `notWritable`,
    ///   `cannotOpen`, `schemaTooNew`…); never a raw SQLite error.
    public init(path: String, options: StoreOptions = .init()) throws {
        self.path = path
        self.options = options
        if let reason = Self.unusablePathReason(path) { throw ChatStoreError.unusablePath(path: path, reason: reason) }
        do {
            (db, openedOnFullDisk) = try Self.open(path: path, options: options)
            statements = try PreparedStatements(db)
            escapedLogBytes = try Self.escapedLogBytes(db)
            autoCheckpointPages = try Self.autoCheckpointPages(db)
        } catch let error as SQLiteError {
            throw Self.startUpError(error, path: path, options: options)
        }
        fileIdentity = FileIdentity(path: path)
    }

    private static func open(path: String, options: StoreOptions) throws -> (Database, onFullDisk: Bool) {
        let db = try Database(path: path, mode: .init(readOnly: options.readOnly, create: true))
        do {
            try configure(db, path: path, options: options)
            return (db, false)
        } catch let error as SQLiteError where options.readOnly && isReadOnlyMedia(error, path: path) {
            let immutable = try Database(path: path, mode: .init(immutable: true))
            try configure(immutable, path: path, options: options)
            return (immutable, false)
        } catch let error as SQLiteError where isDiskFull(error, path: path) && isReadOnlyMedia(error, path: path)
            && (FileIdentity(path: path) != nil) && !hasNoContent(path) {
            // An existing database on a full disk (no room for its -shm file) still serves reads.
            var readOnly = options
            readOnly.readOnly = true
            let immutable = try Database(path: path, mode: .init(immutable: true))
            try configure(immutable, path: path, options: readOnly)
            return (immutable, true)
        }
    }

    /// For a store opened on a full disk: opens the file for writing again when there is room
    /// now, and from then on the store is an ordinary read-write one (it sees other processes'
    /// writes again). Tries at most once a second; returns whether the store can write. Every
    /// write calls it first; a reader that wants to see other processes' writes calls it too.
    @discardableResult
    public func reopenForWritingIfSpaceFreed() -> Bool {
        guard openedOnFullDisk else { return true }
        let now = ContinuousClock.now
        if let last = lastReopenTry, now - last < .seconds(1) { return false }
        lastReopenTry = now
        guard let (writable, onFullDisk) = try? Self.open(path: path, options: options), !onFullDisk,
              let prepared = try? PreparedStatements(writable) else { return false }
        // The old statements are finalized before their connection closes.
        statements = prepared
        db = writable
        escapedLogBytes = try? Self.escapedLogBytes(writable)
        autoCheckpointPages = (try? Self.autoCheckpointPages(writable)) ?? 1000
        installLogSizeReport()
        openedOnFullDisk = false
        reopenings += 1
        return true
    }

    private static func hasNoContent(_ path: String) -> Bool {
        var info = stat()
        return stat(path, &info) != 0 || info.st_size == 0
    }

    /// True when `error` comes from a full disk: SQLite says so, or an I/O error with less than
    /// the low-space reserve free.
    static func isDiskFull(_ error: SQLiteError, path: String) -> Bool {
        error.resultCode == .full
            || (error.resultCode == .ioError && (freeBytes(at: path) ?? .max) < lowSpaceReserveBytes)
    }

    /// True when a read-only open failed for want of the `-shm` file on read-only media (or a
    /// full disk), and no `-wal` file holds commits that an immutable open would not see.
    private static func isReadOnlyMedia(_ error: SQLiteError, path: String) -> Bool {
        guard [.readOnly, .cantOpen, .ioError, .full].contains(error.resultCode) else { return false }
        var info = stat()
        return stat(path + "-wal", &info) != 0 || info.st_size == 0
    }

    /// Why `path` cannot be a store's file: SQLite reads `""`, `:memory:` and `file:` URIs as
    /// something else than a file that other processes share.
    static func unusablePathReason(_ path: String) -> String? {
        if path.isEmpty {
            return "an empty path is SQLite's private temporary database, which no other process sees and which vanishes on close; give the database file's path"
        }
        if path == ":memory:" {
            return "':memory:' is SQLite's private in-memory database, which no other process sees and which vanishes on close; give the database file's path (./:memory: for a file of that name)"
        }
        if path.hasPrefix("file:") {
            return "URI filenames ('file:…') are not accepted; give a plain file path (./\(path) for a file whose name starts with 'file:')"
        }
        return nil
    }

    /// The error that says why the store could not open: one line, no SQL.
    static func startUpError(_ error: SQLiteError, path: String, options: StoreOptions) -> ChatStoreError {
        switch error.resultCode {
        case .notADatabase:
            return .cannotOpen(path: path, reason: "it is not a SQLite database")
        case .corrupt:
            return .damaged(path: path, detail: error.message)
        case _ where isDiskFull(error, path: path):
            return .cannotOpen(path: path, reason: diskFullReason)
        case .busy, .locked:
            return .cannotOpen(path: path, reason: "another process holds it locked (waited \(options.busyTimeoutMilliseconds) ms, the busy timeout)")
        case .readOnly where !options.readOnly, .cantOpen where !options.readOnly:
            return notWritable(path: path, error)
        case .cantOpen:
            return .cannotOpen(path: path, reason: "SQLite cannot open it (\(error.message)); check that the file and its directory exist and can be read")
        default:
            return .cannotOpen(path: path, reason: "\(error.message) (SQLite error \(error.extendedResultCode.rawValue))")
        }
    }

    static let diskFullReason =
        "the disk holding it is full (SQLite needs room for its -wal and -shm files beside the database); free some space"

    private static func configure(_ db: Database, path: String, options: StoreOptions) throws {
        db.setBusyTimeout(milliseconds: options.busyTimeoutMilliseconds)
        // Before anything is written: it takes effect on a new (empty) file only.
        if !options.readOnly { try db.execute("PRAGMA page_size = \(newFilePageSize)") }
        try db.execute("PRAGMA foreign_keys = ON")
        // Each event's savepoint keeps a sub-journal; in a temporary file it costs a write call
        // per page (issue 18: 51 KB handed to write calls per post instead of 6.4 KB).
        try db.execute("PRAGMA temp_store = MEMORY")
        if let cacheSizeKiB = options.cacheSizeKiB {
            try db.execute("PRAGMA cache_size = -\(max(cacheSizeKiB, 1))")
        }
        if let bytes = options.maxDatabaseBytes {
            try db.execute("PRAGMA max_page_count = \(max(bytes / max(try pageSize(db), 512), 1))")
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
            // (`callerSyncsCommits`: the caller syncs each commit itself, `writeAheadLog()`.)
            let syncsAtCommit = options.durability == .full && !options.callerSyncsCommits
            try db.execute("PRAGMA synchronous = \(syncsAtCommit ? "FULL" : "NORMAL")")
            if let pages = options.autoCheckpointPages {
                try db.execute("PRAGMA wal_autocheckpoint = \(max(pages, 0))")
            }
            try configureLogBounds(db, options: options)
            try migrate(db)
        }
    }
}
