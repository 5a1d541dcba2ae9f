/// A JSON value. Integers stay exact (`Int64`); object members keep their order.
public enum JSONValue: Hashable, Sendable {
    case null
    case bool(Bool)
    case number(JSONNumber)
    case string(String)
    case array([JSONValue])
    case object(JSONObject)

    /// The default nesting limit of the parser: deeper input is an error, never a stack overflow.
    public static let defaultMaxDepth = 512

    @inlinable
    public static func integer(_ value: Int64) -> JSONValue { .number(JSONNumber(value)) }

    @inlinable
    public static func integer(_ value: Int) -> JSONValue { .number(JSONNumber(value)) }

    /// Nil when `value` is NaN or infinite.
    @inlinable
    public static func double(_ value: Double) -> JSONValue? { JSONNumber(value).map(JSONValue.number) }

    @inlinable
    public var isNull: Bool {
        if case .null = self { return true }
        return false
    }

    @inlinable
    public var boolValue: Bool? {
        if case .bool(let value) = self { return value }
        return nil
    }

    @inlinable
    public var numberValue: JSONNumber? {
        if case .number(let value) = self { return value }
        return nil
    }

    /// The exact integer value (see `JSONNumber.int64Value`).
    @inlinable
    public var int64Value: Int64? {
        if case .number(let value) = self { return value.int64Value }
        return nil
    }

    @inlinable
    public var stringValue: String? {
        if case .string(let value) = self { return value }
        return nil
    }

    @inlinable
    public var arrayValue: [JSONValue]? {
        if case .array(let value) = self { return value }
        return nil
    }

    @inlinable
    public var objectValue: JSONObject? {
        if case .object(let value) = self { return value }
        return nil
    }

    /// The member `key` of an object; nil for other values or a missing key.
    @inlinable
    public subscript(key: String) -> JSONValue? {
        if case .object(let object) = self { return object[key] }
        return nil
    }

    /// A short name of the value's type for error messages: "a string", "an object"…
    public var typeDescription: String {
        switch self {
        case .null: "null"
        case .bool: "a boolean"
        case .number(let number): number.isInteger ? "an integer" : "a number"
        case .string: "a string"
        case .array: "an array"
        case .object: "an object"
        }
    }
}

extension JSONValue: ExpressibleByNilLiteral, ExpressibleByBooleanLiteral, ExpressibleByIntegerLiteral,
    ExpressibleByStringLiteral, ExpressibleByArrayLiteral, ExpressibleByDictionaryLiteral
{
    @inlinable public init(nilLiteral: ()) { self = .null }
    @inlinable public init(booleanLiteral value: Bool) { self = .bool(value) }
    @inlinable public init(integerLiteral value: Int64) { self = .number(JSONNumber(value)) }
    @inlinable public init(stringLiteral value: String) { self = .string(value) }
    @inlinable public init(arrayLiteral elements: JSONValue...) { self = .array(elements) }
    @inlinable
    public init(dictionaryLiteral elements: (String, JSONValue)...) {
        self = .object(JSONObject(elements.map { (key: $0.0, value: $0.1) }))
    }
}

extension JSONValue: CustomStringConvertible {
    /// The compact JSON text.
    public var description: String { String(decoding: serialized(), as: UTF8.self) }
}
