/// The position of a chat in the chat list: `lastMessageDate` descending, then `id` ascending
/// bytewise (UTF-8), which is SQLite's BINARY collation. The order is total.
///
/// `a < b` means that `a` comes before (above) `b` in the list. It is a type of its own so that
/// pinned chats can join the key later without touching its users.
public struct ChatOrderKey: Hashable, Sendable, Comparable, CustomStringConvertible {
    public var lastMessageDate: Int64
    public var id: String

    @inlinable
    public init(lastMessageDate: Int64, id: String) {
        self.lastMessageDate = lastMessageDate
        self.id = id
    }

    @inlinable
    public static func < (lhs: ChatOrderKey, rhs: ChatOrderKey) -> Bool {
        if lhs.lastMessageDate != rhs.lastMessageDate { return lhs.lastMessageDate > rhs.lastMessageDate }
        return bytewiseLess(lhs.id, rhs.id)
    }

    public var description: String { "(\(lastMessageDate), \(id))" }
}

/// Compares two strings by their UTF-8 bytes, as SQLite's BINARY collation does.
@inlinable
public func bytewiseLess(_ lhs: String, _ rhs: String) -> Bool {
    var lhs = lhs
    var rhs = rhs
    return lhs.withUTF8 { l in
        rhs.withUTF8 { r in
            let common = min(l.count, r.count)
            if common > 0, let lb = l.baseAddress, let rb = r.baseAddress {
                let order = memcmpBytes(lb, rb, common)
                if order != 0 { return order < 0 }
            }
            return l.count < r.count
        }
    }
}

@inlinable
func memcmpBytes(_ a: UnsafePointer<UInt8>, _ b: UnsafePointer<UInt8>, _ count: Int) -> Int {
    for i in 0..<count where a[i] != b[i] {
        return Int(a[i]) - Int(b[i])
    }
    return 0
}
