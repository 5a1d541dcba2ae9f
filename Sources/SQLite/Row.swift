import CSQLite

/// The current row of a statement being stepped. Valid only until the next step.
public struct Row {
    @usableFromInline let statement: Statement

    @inlinable
    init(statement: Statement) { self.statement = statement }

    /// The value of the 0-based `column`. Inlinable: a scan reads each column of each row
    /// through it, and unspecialized across modules each read went through the protocol's
    /// witness and the type's metadata.
    @inlinable
    public subscript<T: DatabaseValueConvertible>(_ column: Int32) -> T {
        T.decode(from: statement.handle, at: column)
    }

    public func isNull(_ column: Int32) -> Bool {
        sqlite3_column_type(statement.handle, column) == SQLITE_NULL
    }
}
