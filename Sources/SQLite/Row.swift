import CSQLite

/// The current row of a statement being stepped. Valid only until the next step.
public struct Row {
    let statement: Statement

    /// The value of the 0-based `column`.
    public subscript<T: DatabaseValueConvertible>(_ column: Int32) -> T {
        T.decode(from: statement.handle, at: column)
    }

    public func isNull(_ column: Int32) -> Bool {
        sqlite3_column_type(statement.handle, column) == SQLITE_NULL
    }
}
