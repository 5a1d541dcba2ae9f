/// The position of a chat in its list (docs/PROTOCOL.md, Values): the pin band first — pinned chats by `pinOrder`
/// descending, above every unpinned chat (`pinOrder` 0) — then `lastMessageDate` descending, then
/// `id` ascending bytewise (UTF-8), which is SQLite's BINARY collation. The order is total.
///
/// `a < b` means that `a` comes before (above) `b` in the list. This is the one comparison of
/// chats: the store's queries and load, the live index and the tests all use it.
public struct ChatOrderKey: Hashable, Sendable, Comparable, CustomStringConvertible {
    /// 0 for an unpinned chat; a pinned chat's place in the pin band, the highest on top.
    public var pinOrder: Int64
    public var lastMessageDate: Int64
    public var id: String

    @inlinable
    public init(pinOrder: Int64 = 0, lastMessageDate: Int64, id: String) {
        self.pinOrder = pinOrder
        self.lastMessageDate = lastMessageDate
        self.id = id
    }

    @inlinable
    public static func < (lhs: ChatOrderKey, rhs: ChatOrderKey) -> Bool {
        if lhs.pinOrder != rhs.pinOrder { return lhs.pinOrder > rhs.pinOrder }
        if lhs.lastMessageDate != rhs.lastMessageDate { return lhs.lastMessageDate > rhs.lastMessageDate }
        return bytewiseLess(lhs.id, rhs.id)
    }

    public var description: String {
        pinOrder > 0 ? "(pin \(pinOrder), \(lastMessageDate), \(id))" : "(\(lastMessageDate), \(id))"
    }
}

/// Compares two strings by their UTF-8 bytes, as SQLite's BINARY collation does.
@inlinable
public func bytewiseLess(_ lhs: String, _ rhs: String) -> Bool {
    // In place, without the copies `withUTF8` (a mutating method) would need; every native
    // string has contiguous UTF-8.
    let inPlace = lhs.utf8.withContiguousStorageIfAvailable { l in
        rhs.utf8.withContiguousStorageIfAvailable { r in
            let common = min(l.count, r.count)
            // The same storage (a key compared with itself, as a removal finds it) is equal.
            if common > 0, let lb = l.baseAddress, let rb = r.baseAddress, lb != rb {
                let order = memcmpBytes(lb, rb, common)
                if order != 0 { return order < 0 }
            }
            return l.count < r.count
        }
    }
    return (inPlace ?? nil) ?? lhs.utf8.lexicographicallyPrecedes(rhs.utf8)
}

/// Negative, zero or positive as the `count` bytes at `a` are bytewise less than, equal to or
/// greater than those at `b`.
@inlinable
func memcmpBytes(_ a: UnsafePointer<UInt8>, _ b: UnsafePointer<UInt8>, _ count: Int) -> Int {
    // Eight bytes at a time as big-endian words, whose order is the order of their first
    // differing byte (a chat id of 17 bytes is two words and a byte, not 17 byte compares).
    var i = 0
    while i + 8 <= count {
        let x = UnsafeRawPointer(a + i).loadUnaligned(as: UInt64.self).bigEndian
        let y = UnsafeRawPointer(b + i).loadUnaligned(as: UInt64.self).bigEndian
        if x != y { return x < y ? -1 : 1 }
        i += 8
    }
    while i < count {
        if a[i] != b[i] { return Int(a[i]) - Int(b[i]) }
        i += 1
    }
    return 0
}
