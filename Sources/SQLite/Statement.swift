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
    @usableFromInline let parameterCount: Int
    /// The bytes of the text arguments bound last, which SQLite reads in place (`SQLITE_STATIC`)
    /// until the statement is bound again: a post's statements bind eight strings, each an
    /// allocation and a copy of SQLite's otherwise.
    @usableFromInline var boundText = UnsafeMutableRawBufferPointer(start: nil, count: 0)

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

    deinit {
        sqlite3_finalize(handle)
        boundText.deallocate()
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

    /// Resets the statement and binds `arguments` to its parameters `?1`, `?2`, …; parameters
    /// beyond them are NULL. Inlinable and generic over each argument's type: a write's
    /// statements bind through it, and an array of existentials cost an allocation, a box
    /// per argument and a witness call each (docs/DECISIONS.md, "Statements bind their
    /// arguments by their types").
    @inlinable
    public func bind<each Value: DatabaseValueConvertible>(_ arguments: repeat each Value) throws(SQLiteError) {
        sqlite3_reset(handle)
        // The text arguments are copied into `boundText` (first made large enough, or small
        // again after a large text: what the last binding left there is bound again below, or
        // NULL), and bound from there.
        var textBytes = 0
        for argument in repeat each arguments { textBytes += argument.boundTextByteCount }
        if textBytes > boundText.count || boundText.baseAddress == nil
            || (boundText.count > 65_536 && textBytes <= 65_536) {
            makeRoom(forText: textBytes)
        }
        var text = boundText.baseAddress!
        var index: Int32 = 0
        for argument in repeat each arguments {
            index += 1
            let code = argument.bind(to: handle, at: index, copyingTextTo: &text)
            if code != SQLITE_OK { throw bindingError(code: code) }
        }
        if index < parameterCount { clearBindings(from: index) }
    }

    /// Replaces `boundText` by room for at least `count` bytes: twice the old room when that is
    /// more, so that growing texts reallocate rarely; `count` alone when it shrinks, so that one
    /// long text (a message of a megabyte) is not kept for the statement's life. No parameter
    /// may be read from the old room until the statement is bound again.
    @usableFromInline
    func makeRoom(forText count: Int) {
        let grown = count > boundText.count ? max(count, 2 * boundText.count) : count
        boundText.deallocate()
        boundText = .allocate(byteCount: max(grown, 64), alignment: 1)
    }

    /// Clears the parameters after the first `count`, which the caller bound.
    @usableFromInline
    func clearBindings(from count: Int32) {
        for parameter in (count + 1)...Int32(parameterCount) { sqlite3_bind_null(handle, parameter) }
    }

    /// The error of a binding that failed with `code`.
    @usableFromInline
    func bindingError(code: Int32) -> SQLiteError { database.error(code: code, sql: sql) }

    /// Runs the statement to completion with `arguments`.
    @inlinable
    public func execute<each Value: DatabaseValueConvertible>(_ arguments: repeat each Value) throws(SQLiteError) {
        try bind(repeat each arguments)
        defer { sqlite3_reset(handle) }
        while try step() {}
    }

    /// Runs the statement with `arguments` and calls `row` for each result row.
    @inlinable
    public func forEachRow<each Value: DatabaseValueConvertible>(
        _ arguments: repeat each Value, row: (Row) throws -> Void
    ) throws {
        try bind(repeat each arguments)
        defer { sqlite3_reset(handle) }
        while try step() { try row(Row(statement: self)) }
    }

    /// The rows of the statement with `arguments`, each decoded by `decode`.
    @inlinable
    public func fetchAll<each Value: DatabaseValueConvertible, T>(
        _ arguments: repeat each Value, decode: (Row) throws -> T
    ) throws -> [T] {
        var values: [T] = []
        try forEachRow(repeat each arguments) { values.append(try decode($0)) }
        return values
    }

    /// The first row of the statement with `arguments` decoded by `decode`, or nil when none.
    @inlinable
    public func fetchOne<each Value: DatabaseValueConvertible, T>(
        _ arguments: repeat each Value, decode: (Row) throws -> T
    ) throws -> T? {
        try bind(repeat each arguments)
        defer { sqlite3_reset(handle) }
        return try step() ? try decode(Row(statement: self)) : nil
    }

    /// The first column of the first row, or nil when there is no row or it is NULL.
    @inlinable
    public func fetchValue<T: DatabaseValueConvertible, each Value: DatabaseValueConvertible>(
        _ type: T.Type = T.self, _ arguments: repeat each Value
    ) throws(SQLiteError) -> T? {
        try bind(repeat each arguments)
        defer { sqlite3_reset(handle) }
        guard try step() else { return nil }
        return Optional<T>.decode(from: handle, at: 0)
    }
}
