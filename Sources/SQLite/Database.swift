import CSQLite

/// One SQLite connection.
///
/// Not Sendable: a connection belongs to one owner (a thread, an actor or a task) for its whole
/// life. Statements are prepared once and cached by their SQL (`cachedStatement(_:)`).
public final class Database {
    /// How the file is opened.
    public struct OpenMode: Sendable, Hashable {
        public var readOnly: Bool
        /// Create the file when it is missing (ignored when `readOnly`).
        public var create: Bool
        /// Read-only, and the file (with its `-wal`, if any) is taken to change under no one:
        /// SQLite's `immutable=1`, which takes no locks and needs no `-shm` file, so that a
        /// database on read-only media opens. Implies `readOnly`.
        public var immutable: Bool

        public init(readOnly: Bool = false, create: Bool = true, immutable: Bool = false) {
            self.readOnly = readOnly || immutable
            self.create = create
            self.immutable = immutable
        }
    }

    public let path: String
    let handle: OpaquePointer
    private var statementCache: [String: Statement] = [:]
    /// What the write-ahead log hook calls (`checkpointAutomatically(atPages:afterEachCommit:)`),
    /// kept alive as long as the connection.
    private var logHook: LogHook?

    /// Opens the database at `path` (":memory:" for a private in-memory database).
    public init(path: String, mode: OpenMode = OpenMode()) throws(SQLiteError) {
        var flags = SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_EXRESCODE
        if mode.readOnly {
            flags |= SQLITE_OPEN_READONLY
        } else {
            flags |= SQLITE_OPEN_READWRITE
            if mode.create { flags |= SQLITE_OPEN_CREATE }
        }
        var name = path
        if mode.immutable {
            flags |= SQLITE_OPEN_URI
            name = "file:" + Self.uriEscaped(path) + "?immutable=1"
        }
        var handle: OpaquePointer?
        let code = sqlite3_open_v2(name, &handle, flags, nil)
        guard code == SQLITE_OK, let handle else {
            let message = handle.map { String(cString: sqlite3_errmsg($0)) } ?? String(cString: sqlite3_errstr(code))
            sqlite3_close_v2(handle)
            throw SQLiteError(extendedResultCode: ResultCode(rawValue: code), message: "cannot open '\(path)': \(message)")
        }
        self.path = path
        self.handle = handle
        sqlite3_extended_result_codes(handle, 1)
    }

    /// `path` as the path of a `file:` URI: `%`, `?` and `#` escaped.
    static func uriEscaped(_ path: String) -> String {
        var escaped = ""
        for character in path {
            switch character {
            case "%": escaped += "%25"
            case "?": escaped += "%3F"
            case "#": escaped += "%23"
            default: escaped.append(character)
            }
        }
        return escaped
    }

    deinit {
        statementCache.removeAll()
        sqlite3_close_v2(handle)
    }

    /// Runs one or more SQL statements that return no rows (schema, pragmas, transaction control).
    public func execute(_ sql: String) throws(SQLiteError) {
        var message: UnsafeMutablePointer<CChar>?
        let code = sqlite3_exec(handle, sql, nil, nil, &message)
        if code != SQLITE_OK {
            let text = message.map { String(cString: $0) } ?? String(cString: sqlite3_errmsg(handle))
            sqlite3_free(message)
            throw SQLiteError(extendedResultCode: ResultCode(rawValue: sqlite3_extended_errcode(handle)), message: text, sql: sql)
        }
    }

    /// The statement for `sql`, prepared on first use and reused afterwards.
    public func cachedStatement(_ sql: String) throws(SQLiteError) -> Statement {
        if let statement = statementCache[sql] { return statement }
        let statement = try Statement(database: self, sql: sql)
        statementCache[sql] = statement
        return statement
    }

    /// A new statement that is not cached (for SQL that runs once).
    public func makeStatement(_ sql: String) throws(SQLiteError) -> Statement {
        try Statement(database: self, sql: sql)
    }

    /// How long a writer waits for a lock held by another connection before failing with SQLITE_BUSY.
    ///
    /// It tries the lock again every millisecond. (SQLite's own busy timeout backs off to 100 ms
    /// between tries, so a writer waiting on a busy process that releases the lock for a few
    /// milliseconds between transactions can miss every window until it times out.)
    public func setBusyTimeout(milliseconds: Int) {
        let limit = max(0, min(milliseconds, Int(Int32.max)))
        sqlite3_busy_handler(handle, { context, attempts in
            guard Int(attempts) < Int(bitPattern: context) else { return 0 }
            sqlite3_sleep(1)
            return 1
        }, UnsafeMutableRawPointer(bitPattern: limit))
    }

    /// Runs `sql` like `execute(_:)`, retrying while another connection holds the lock, up to
    /// `milliseconds`: SQLite answers some statements (e.g. `PRAGMA journal_mode = WAL` when
    /// several processes open a new file at once) busy at once, without calling the busy handler.
    public func execute(_ sql: String, retryingWhileBusyFor milliseconds: Int) throws(SQLiteError) {
        var waited = 0
        while true {
            do {
                try execute(sql)
                return
            } catch where error.isBusy && waited < milliseconds {
                sqlite3_sleep(5)
                waited += 5
            }
        }
    }

    /// How a checkpoint waits for the connections that use the log (`sqlite3_wal_checkpoint_v2`).
    public enum CheckpointMode: Int32, Sendable {
        /// Copies what no reader still needs and waits for no one.
        case passive = 0
    }

    /// The log's frames and how many of them are now in the database file, after a checkpoint.
    public struct CheckpointProgress: Sendable, Hashable {
        public var logFrames: Int
        public var checkpointedFrames: Int
        /// Every frame the log held when the checkpoint began is in the database file (commits
        /// during the checkpoint may have added more: SQLite then did not sync the file).
        public var isComplete: Bool { checkpointedFrames == logFrames }
    }

    /// Checkpoints the main database's write-ahead log; nil when the database is not in WAL
    /// mode. A checkpoint that another one holds off throws a busy error.
    ///
    /// A connection opens the log with its first read, and SQLite before 3.41 checkpoints
    /// nothing on a connection that has not read yet (it reports success, and -1 frames): such a
    /// connection reads the schema's version first, and tries again.
    public func checkpoint(_ mode: CheckpointMode) throws(SQLiteError) -> CheckpointProgress? {
        var log: Int32 = -1
        var checkpointed: Int32 = -1
        for attempt in 0..<2 {
            if attempt == 1 {
                guard log < 0 else { break }
                _ = try cachedStatement("PRAGMA schema_version").fetchValue(Int64.self)
            }
            let code = sqlite3_wal_checkpoint_v2(handle, "main", mode.rawValue, &log, &checkpointed)
            guard code == SQLITE_OK else { throw error(code: code, sql: nil) }
        }
        guard log >= 0 else { return nil }
        return CheckpointProgress(logFrames: Int(log), checkpointedFrames: Int(checkpointed))
    }

    /// SQLite's automatic checkpoint (`PRAGMA wal_autocheckpoint`: a passive checkpoint by the
    /// committing connection once the log holds `pages` frames; 0 for none), and after every
    /// commit of this connection, `afterEachCommit` with the number of frames the log held then.
    /// It replaces the automatic checkpoint's hook (`sqlite3_wal_hook`): a later `PRAGMA
    /// wal_autocheckpoint = N` on the connection replaces it in turn, and the query form of that
    /// pragma then answers 0.
    public func checkpointAutomatically(atPages pages: Int, afterEachCommit: @escaping (_ logFrames: Int) -> Void) {
        let hook = LogHook(pages: Int32(clamping: max(pages, 0)), afterEachCommit: afterEachCommit)
        logHook = hook
        sqlite3_wal_hook(handle, { context, db, name, frames in
            let hook = Unmanaged<LogHook>.fromOpaque(context!).takeUnretainedValue()
            if hook.pages > 0 && frames >= hook.pages { sqlite3_wal_checkpoint(db, name) }
            hook.afterEachCommit(Int(frames))
            return SQLITE_OK
        }, Unmanaged.passUnretained(hook).toOpaque())
    }

    /// Flushes the main database file to storage through SQLite's own file handle (the VFS's
    /// `xSync`, `fdatasync` on Linux), as a checkpoint does once it has copied the whole log.
    ///
    /// A passive checkpoint that a writer overtakes copies pages into the file but does not
    /// sync it: those pages then wait in the kernel for whichever checkpoint completes next
    /// (docs/DECISIONS.md, "The checkpointer syncs what it copied").
    public func syncMainFile() throws(SQLiteError) {
        var pointer: UnsafeMutableRawPointer?
        let code = sqlite3_file_control(handle, "main", SQLITE_FCNTL_FILE_POINTER, &pointer)
        guard code == SQLITE_OK, let file = pointer?.assumingMemoryBound(to: sqlite3_file.self),
              let sync = file.pointee.pMethods?.pointee.xSync
        else { throw error(code: code == SQLITE_OK ? SQLITE_MISUSE : code, sql: nil) }
        let synced = sync(file, SQLITE_SYNC_NORMAL)
        guard synced == SQLITE_OK else {
            throw SQLiteError(extendedResultCode: ResultCode(rawValue: synced), message: "cannot sync '\(path)'")
        }
    }

    /// The write-ahead log's file as SQLite holds it open (`SQLITE_FCNTL_JOURNAL_POINTER`), so
    /// that its commits can be synced later, or on another thread (`WriteAheadLogFile.sync()`).
    /// Nil when the connection has no log open (not in WAL mode, or before its first read).
    public func writeAheadLogFile() -> WriteAheadLogFile? {
        var pointer: UnsafeMutableRawPointer?
        let code = sqlite3_file_control(handle, "main", SQLITE_FCNTL_JOURNAL_POINTER, &pointer)
        guard code == SQLITE_OK, let file = pointer?.assumingMemoryBound(to: sqlite3_file.self),
              file.pointee.pMethods != nil
        else { return nil }
        return WriteAheadLogFile(file: file, path: path + "-wal")
    }

    /// Rows changed by the latest INSERT, UPDATE or DELETE.
    public var changedRowCount: Int { Int(sqlite3_changes64(handle)) }

    /// Rows changed by every INSERT, UPDATE or DELETE that completed since the connection opened
    /// (not those of triggers, nor those of a statement that failed: SQLite undid them).
    public var totalChangedRowCount: Int64 { sqlite3_total_changes64(handle) }

    /// The rowid of the latest successful INSERT.
    public var lastInsertedRowID: Int64 { sqlite3_last_insert_rowid(handle) }

    /// True when the main database was opened read-only (asked for, or the file is not writable).
    public var isReadOnly: Bool { sqlite3_db_readonly(handle, "main") == 1 }

    /// False while a transaction is open.
    public var isAutocommit: Bool { sqlite3_get_autocommit(handle) != 0 }

    func error(code: Int32, sql: String?) -> SQLiteError {
        let extended = sqlite3_extended_errcode(handle)
        return SQLiteError(
            extendedResultCode: ResultCode(rawValue: extended == 0 ? code : extended),
            message: String(cString: sqlite3_errmsg(handle)), sql: sql)
    }
}

/// The automatic checkpoint's point and the callback of `checkpointAutomatically`.
private final class LogHook {
    let pages: Int32
    let afterEachCommit: (Int) -> Void
    init(pages: Int32, afterEachCommit: @escaping (Int) -> Void) {
        self.pages = pages
        self.afterEachCommit = afterEachCommit
    }
}
