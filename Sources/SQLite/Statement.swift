import CSQLite

/// A prepared statement. Prepare it once (`Database.cachedStatement(_:)`) and reuse it: every
/// `execute`/`fetch` resets it and binds new arguments.
///
/// Like its `Database`, a statement is not Sendable and must stay with its connection.
public final class Statement {
    public let sql: String
    @usableFromInline let handle: OpaquePointer
    unowned let database: Database
    /// The number of its parameters (the largest `?N`).
    let parameterCount: Int

    init(database: Database, sql: String) throws(SQLiteError) {
        var handle: OpaquePointer?
        let code = sqlite3_prepare_v3(
            database.handle, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &handle, nil)
        guard code == SQLITE_OK, let handle else {
            throw database.error(code: code, sql: sql)
        }
        self.sql = sql
        self.handle = handle
        self.database = database
        parameterCount = Int(sqlite3_bind_parameter_count(handle))
    }

    deinit { sqlite3_finalize(handle) }

    /// Resets the statement and binds `arguments` to its parameters `?1`, `?2`, …; parameters
    /// beyond them are NULL.
    public func bind(_ arguments: [any DatabaseValueConvertible]) throws(SQLiteError) {
        sqlite3_reset(handle)
        // (Arguments for every parameter replace each earlier binding: nothing to clear, a
        // pass over every parameter spared on each write's statements.)
        if arguments.count < parameterCount { sqlite3_clear_bindings(handle) }
        for (offset, argument) in arguments.enumerated() {
            let code = argument.bind(to: handle, at: Int32(offset + 1))
            if code != SQLITE_OK { throw database.error(code: code, sql: sql) }
        }
    }

    /// Steps once: true when a row is available, false when the statement is done.
    @discardableResult
    public func step() throws(SQLiteError) -> Bool {
        switch sqlite3_step(handle) {
        case SQLITE_ROW: return true
        case SQLITE_DONE: return false
        case let code:
            let error = database.error(code: code, sql: sql)
            sqlite3_reset(handle)
            throw error
        }
    }

    /// Runs the statement to completion with `arguments`.
    public func execute(_ arguments: any DatabaseValueConvertible...) throws(SQLiteError) {
        try bind(arguments)
        defer { sqlite3_reset(handle) }
        while try step() {}
    }

    /// Runs the statement with `arguments` and calls `row` for each result row.
    public func forEachRow(
        _ arguments: [any DatabaseValueConvertible], _ row: (Row) throws -> Void
    ) throws {
        try bind(arguments)
        defer { sqlite3_reset(handle) }
        while try step() { try row(Row(statement: self)) }
    }

    /// The rows of the statement with `arguments`, each decoded by `decode`.
    public func fetchAll<T>(
        _ arguments: any DatabaseValueConvertible..., decode: (Row) throws -> T
    ) throws -> [T] {
        var values: [T] = []
        try forEachRow(arguments) { values.append(try decode($0)) }
        return values
    }

    /// The first row of the statement with `arguments` decoded by `decode`, or nil when none.
    public func fetchOne<T>(
        _ arguments: any DatabaseValueConvertible..., decode: (Row) throws -> T
    ) throws -> T? {
        try bind(arguments)
        defer { sqlite3_reset(handle) }
        return try step() ? try decode(Row(statement: self)) : nil
    }

    /// The first column of the first row, or nil when there is no row or it is NULL.
    public func fetchValue<T: DatabaseValueConvertible>(
        _ type: T.Type = T.self, _ arguments: any DatabaseValueConvertible...
    ) throws(SQLiteError) -> T? {
        try bind(arguments)
        defer { sqlite3_reset(handle) }
        guard try step() else { return nil }
        return Optional<T>.decode(from: handle, at: 0)
    }
}
