import CSQLite

/// A Swift value that binds to a statement parameter and reads from a result column.
public protocol DatabaseValueConvertible {
    /// Binds `self` to the 1-based parameter `index` of `statement`.
    func bind(to statement: OpaquePointer, at index: Int32) -> Int32
    /// Reads the 0-based column `index` of the current row; the column is not NULL.
    static func decode(from statement: OpaquePointer, at index: Int32) -> Self
    /// The bytes of text `bind(to:at:copyingTextTo:)` copies (0 when it copies none).
    var boundTextByteCount: Int { get }
    /// Binds `self` as `bind(to:at:)` does, its text (if any) copied to `text`, which moves past
    /// it, and bound from there: SQLite reads it in place (`SQLITE_STATIC`), with no copy and no
    /// allocation of its own. `Statement.bind` keeps those bytes until it binds again.
    func bind(to statement: OpaquePointer, at index: Int32, copyingTextTo text: inout UnsafeMutableRawPointer) -> Int32
}

extension DatabaseValueConvertible {
    @inlinable
    public var boundTextByteCount: Int { 0 }

    @inlinable
    public func bind(to statement: OpaquePointer, at index: Int32, copyingTextTo text: inout UnsafeMutableRawPointer) -> Int32 {
        bind(to: statement, at: index)
    }
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
    public var boundTextByteCount: Int { utf8.count }

    @inlinable
    public func bind(to statement: OpaquePointer, at index: Int32, copyingTextTo text: inout UnsafeMutableRawPointer) -> Int32 {
        var string = self
        return string.withUTF8 { bytes in
            guard let base = bytes.baseAddress else { return bind(to: statement, at: index) }  // "" as TEXT
            let start = text
            start.copyMemory(from: base, byteCount: bytes.count)
            text += bytes.count
            return sqlite3_bind_text(statement, index, start.assumingMemoryBound(to: CChar.self), Int32(bytes.count), nil)
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
    public var boundTextByteCount: Int { self?.boundTextByteCount ?? 0 }

    @inlinable
    public func bind(to statement: OpaquePointer, at index: Int32, copyingTextTo text: inout UnsafeMutableRawPointer) -> Int32 {
        switch self {
        case .some(let value): value.bind(to: statement, at: index, copyingTextTo: &text)
        case .none: sqlite3_bind_null(statement, index)
        }
    }

    @inlinable
    public static func decode(from statement: OpaquePointer, at index: Int32) -> Wrapped? {
        sqlite3_column_type(statement, index) == SQLITE_NULL ? nil : Wrapped.decode(from: statement, at: index)
    }
}
