/// An error reported by SQLite: its extended result code, its message and the SQL that failed.
public struct SQLiteError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The extended result code (`SQLITE_BUSY`, `SQLITE_CONSTRAINT_UNIQUE`, …).
    public var extendedResultCode: ResultCode
    public var message: String
    /// The statement that failed, when there was one.
    public var sql: String?

    public init(extendedResultCode: ResultCode, message: String, sql: String? = nil) {
        self.extendedResultCode = extendedResultCode
        self.message = message
        self.sql = sql
    }

    /// The primary result code (`SQLITE_BUSY`, `SQLITE_CONSTRAINT`, …).
    public var resultCode: ResultCode { extendedResultCode.primary }

    /// True when another connection held the lock for longer than the busy timeout.
    public var isBusy: Bool { resultCode == .busy || resultCode == .locked }

    /// The code and message without the SQL: for messages to people who did not write it.
    public var summary: String {
        "\(message) (SQLite error \(extendedResultCode.rawValue))"
    }

    public var description: String {
        var text = "SQLite error \(extendedResultCode.rawValue) (\(extendedResultCode)): \(message)"
        if let sql { text += " — in `\(sql)`" }
        return text
    }
}
