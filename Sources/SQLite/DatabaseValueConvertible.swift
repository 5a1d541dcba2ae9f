import CSQLite

/// A Swift value that binds to a statement parameter and reads from a result column.
public protocol DatabaseValueConvertible {
    /// Binds `self` to the 1-based parameter `index` of `statement`.
    func bind(to statement: OpaquePointer, at index: Int32) -> Int32
    /// Reads the 0-based column `index` of the current row; the column is not NULL.
    static func decode(from statement: OpaquePointer, at index: Int32) -> Self
}

extension Int64: DatabaseValueConvertible {
    @inlinable
    public func bind(to statement: OpaquePointer, at index: Int32) -> Int32 {
        sqlite3_bind_int64(statement, index, self)
    }
    @inlinable
    public static func decode(from statement: OpaquePointer, at index: Int32) -> Int64 {
        sqlite3_column_int64(statement, index)
    }
}

extension Int: DatabaseValueConvertible {
    @inlinable
    public func bind(to statement: OpaquePointer, at index: Int32) -> Int32 {
        sqlite3_bind_int64(statement, index, Int64(self))
    }
    @inlinable
    public static func decode(from statement: OpaquePointer, at index: Int32) -> Int {
        Int(sqlite3_column_int64(statement, index))
    }
}

extension Bool: DatabaseValueConvertible {
    @inlinable
    public func bind(to statement: OpaquePointer, at index: Int32) -> Int32 {
        sqlite3_bind_int(statement, index, self ? 1 : 0)
    }
    @inlinable
    public static func decode(from statement: OpaquePointer, at index: Int32) -> Bool {
        sqlite3_column_int(statement, index) != 0
    }
}

extension String: DatabaseValueConvertible {
    @inlinable
    public func bind(to statement: OpaquePointer, at index: Int32) -> Int32 {
        var string = self
        return string.withUTF8 { bytes in
            // A non-nil pointer even when empty, so that "" binds as TEXT, not NULL.
            let pointer = bytes.baseAddress.map { UnsafeRawPointer($0) } ?? UnsafeRawPointer(("" as StaticString).utf8Start)
            return sqlite3_bind_text(
                statement, index, pointer.assumingMemoryBound(to: CChar.self), Int32(bytes.count),
                chatfeed_sqlite_transient())
        }
    }
    @inlinable
    public static func decode(from statement: OpaquePointer, at index: Int32) -> String {
        guard let text = sqlite3_column_text(statement, index) else { return "" }
        let count = Int(sqlite3_column_bytes(statement, index))
        return String(decoding: UnsafeBufferPointer(start: text, count: count), as: UTF8.self)
    }
}

extension Optional: DatabaseValueConvertible where Wrapped: DatabaseValueConvertible {
    @inlinable
    public func bind(to statement: OpaquePointer, at index: Int32) -> Int32 {
        switch self {
        case .some(let value): value.bind(to: statement, at: index)
        case .none: sqlite3_bind_null(statement, index)
        }
    }
    @inlinable
    public static func decode(from statement: OpaquePointer, at index: Int32) -> Wrapped? {
        sqlite3_column_type(statement, index) == SQLITE_NULL ? nil : Wrapped.decode(from: statement, at: index)
    }
}
