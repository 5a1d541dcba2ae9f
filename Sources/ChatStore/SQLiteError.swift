import CSQLite

/// An error reported by SQLite: its extended result code, its message and the SQL that failed.
public struct SQLiteError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The extended result code (`SQLITE_BUSY`, `SQLITE_CONSTRAINT_UNIQUE`, …).
    public var extendedResultCode: Int32
    public var message: String
    /// The statement that failed, when there was one.
    public var sql: String?

    public init(extendedResultCode: Int32, message: String, sql: String? = nil) {
        self.extendedResultCode = extendedResultCode
        self.message = message
        self.sql = sql
    }

    /// The primary result code (`SQLITE_BUSY`, `SQLITE_CONSTRAINT`, …).
    public var resultCode: Int32 { extendedResultCode & 0xFF }

    /// True when another connection held the lock for longer than the busy timeout.
    public var isBusy: Bool { resultCode == SQLITE_BUSY || resultCode == SQLITE_LOCKED }

    public var description: String {
        let name = String(cString: sqlite3_errstr(extendedResultCode))
        var text = "SQLite error \(extendedResultCode) (\(name)): \(message)"
        if let sql { text += " — in `\(sql)`" }
        return text
    }
}
