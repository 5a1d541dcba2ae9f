/// A JSON object that keeps its members in order. Keys are unique when it comes from the parser;
/// `subscript(key)` reads and replaces the first member with that key.
public struct JSONObject: Hashable, Sendable, RandomAccessCollection, ExpressibleByDictionaryLiteral {
    public typealias Element = (key: String, value: JSONValue)
    public typealias Index = Int

    public var members: [Element]

    @inlinable
    public init() { members = [] }

    @inlinable
    public init(_ members: [Element]) { self.members = members }

    @inlinable
    public init(dictionaryLiteral elements: (String, JSONValue)...) {
        members = elements.map { (key: $0.0, value: $0.1) }
    }

    @inlinable public var startIndex: Int { members.startIndex }
    @inlinable public var endIndex: Int { members.endIndex }
    @inlinable public subscript(position: Int) -> Element { members[position] }

    /// The value of the first member named `key`; setting nil removes it, setting a value
    /// replaces it in place or appends it.
    @inlinable
    public subscript(key: String) -> JSONValue? {
        get {
            for member in members where member.key == key { return member.value }
            return nil
        }
        set {
            if let index = members.firstIndex(where: { $0.key == key }) {
                if let newValue { members[index].value = newValue } else { members.remove(at: index) }
            } else if let newValue {
                members.append((key: key, value: newValue))
            }
        }
    }

    /// Appends a member without looking for an existing one with the same key.
    @inlinable
    public mutating func append(_ key: String, _ value: JSONValue) {
        members.append((key: key, value: value))
    }

    @inlinable
    public mutating func reserveCapacity(_ capacity: Int) { members.reserveCapacity(capacity) }

    public var keys: [String] { members.map(\.key) }

    /// Order-sensitive: `{"a":1,"b":2}` differs from `{"b":2,"a":1}`.
    public static func == (lhs: JSONObject, rhs: JSONObject) -> Bool {
        guard lhs.members.count == rhs.members.count else { return false }
        for (l, r) in zip(lhs.members, rhs.members) where l.key != r.key || l.value != r.value {
            return false
        }
        return true
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(members.count)
        for member in members {
            hasher.combine(member.key)
            hasher.combine(member.value)
        }
    }
}
