/// A JSON number: an exact 64-bit integer, or a `Double` for every other number.
///
/// A parsed number that is not an exact integer (or is `-0`) keeps its text, so that it is
/// written back as it came (a request id such as `12345678901234567890`, `1.50`, `-0` or `1e400`
/// is echoed exactly); equality and hashing ignore the text. Only a parsed number beyond a
/// double's range (`1e400`) has an infinite `doubleValue`, and it is written as its text: a
/// non-finite double cannot be created otherwise, so every `JSONValue` serializes to valid JSON.
public struct JSONNumber: Hashable, Sendable, CustomStringConvertible {
    @usableFromInline
    enum Storage: Hashable, Sendable {
        case integer(Int64)
        case double(Double)
    }

    @usableFromInline
    var storage: Storage

    /// The text the number was parsed from, when it was not an exact integer.
    @usableFromInline
    var literal: String?

    /// A parsed non-integer (or out-of-range integer, or `-0`) number with its text.
    init(parsed value: Double, literal: String) {
        storage = .double(value)
        self.literal = literal
    }

    /// A parsed integer whose text is not its value's (`-0`).
    init(parsedInteger value: Int64, literal: String) {
        storage = .integer(value)
        self.literal = literal
    }

    public static func == (lhs: JSONNumber, rhs: JSONNumber) -> Bool { lhs.storage == rhs.storage }

    public func hash(into hasher: inout Hasher) { hasher.combine(storage) }

    @inlinable
    public init(_ value: Int64) { storage = .integer(value) }

    @inlinable
    public init(_ value: Int) { storage = .integer(Int64(value)) }

    /// Nil when `value` is NaN or infinite.
    @inlinable
    public init?(_ value: Double) {
        guard value.isFinite else { return nil }
        storage = .double(value)
    }

    /// True when the number was written (or created) as an integer.
    @inlinable
    public var isInteger: Bool {
        if case .integer = storage { return true }
        return false
    }

    /// The exact integer value: an integer, or a double with an integral value strictly inside
    /// ±2⁶³ (−2⁶³ itself is excluded because a text such as `-9223372036854775809` rounds to it).
    @inlinable
    public var int64Value: Int64? {
        switch storage {
        case .integer(let value): value
        case .double(let value): value == -0x1p63 ? nil : Int64(exactly: value)
        }
    }

    /// The value as a double (large integers may round).
    @inlinable
    public var doubleValue: Double {
        switch storage {
        case .integer(let value): Double(value)
        case .double(let value): value
        }
    }

    public var description: String {
        if let literal { return literal }
        return switch storage {
        case .integer(let value): String(value)
        case .double(let value): value.description
        }
    }
}
