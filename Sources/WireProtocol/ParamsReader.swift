import ChatModel
import JSONCodec

/// Reads the named members of a params object; every failure is `ChatError.invalidParams`
/// naming the field (missing, wrong type, out of range, unknown).
public struct ParamsReader: Sendable {
    public let object: JSONObject
    /// The path of the object in error messages ("" for the params themselves).
    public let field: String

    /// Params of a request: absent means `{}`; an array (by-position params) or any other
    /// non-object is an error; a member not in `allowed` (nor `alsoAllowed`, when given) is an error.
    public init(params: JSONValue?, method: String, allowed: [String], alsoAllowed: String? = nil) throws(ChatError) {
        guard let params else {
            try self.init(.object(JSONObject()), field: "", allowed: allowed)
            return
        }
        if case .array = params {
            throw .invalidParams(
                field: "params",
                reason: "\(method) takes named parameters (an object); by-position arrays are not supported")
        }
        try self.init(params, field: "", allowed: allowed, alsoAllowed: alsoAllowed, context: method)
    }

    /// A nested object at `field`, with the same rules.
    public init(
        _ value: JSONValue, field: String, allowed: [String], alsoAllowed: String? = nil, context: String? = nil
    ) throws(ChatError) {
        guard case .object(let object) = value else {
            throw .invalidParams(
                field: field.isEmpty ? "params" : field, reason: "must be an object, not \(value.typeDescription)")
        }
        self.object = object
        self.field = field
        for key in object.keys where !allowed.contains(key) && key != alsoAllowed {
            let owner = context ?? (field.isEmpty ? "params" : field)
            let names = allowed + (alsoAllowed.map { [$0] } ?? [])
            let expected = names.isEmpty ? "it takes none" : "expected " + names.joined(separator: ", ")
            throw .invalidParams(field: path(key), reason: "is not a parameter of \(owner); \(expected)")
        }
    }

    /// A value of a result or notification at `field`: an object whose members this decoder
    /// does not know are ignored (a newer server may add some).
    public init(result value: JSONValue, field: String) throws(ChatError) {
        guard case .object(let object) = value else {
            throw .invalidParams(field: field.isEmpty ? "result" : field, reason: "must be an object, not \(value.typeDescription)")
        }
        self.object = object
        self.field = field
    }

    /// `key` prefixed with this object's path.
    public func path(_ key: String) -> String { field.isEmpty ? key : "\(field).\(key)" }

    /// The member, with JSON null read as absent.
    private func member(_ key: String) -> JSONValue? {
        guard let value = object[key], value != .null else { return nil }
        return value
    }

    public func string(_ key: String) throws(ChatError) -> String {
        guard let value = try optionalString(key) else { throw .invalidParams(field: path(key), reason: "is required") }
        return value
    }

    public func optionalString(_ key: String) throws(ChatError) -> String? {
        guard let value = member(key) else { return nil }
        guard case .string(let string) = value else {
            throw .invalidParams(field: path(key), reason: "must be a string, not \(value.typeDescription)")
        }
        return string
    }

    /// A chat or message id, checked as writes check ids (`Identifier.validate`).
    public func identifier(_ key: String) throws(ChatError) -> String {
        let id = try string(key)
        try Identifier.validate(id, field: path(key))
        return id
    }

    /// An array of ids whose length is in `count`, each checked as writes check ids; the field
    /// of an error is `key[index]`.
    public func identifierArray(_ key: String, count: ClosedRange<Int>) throws(ChatError) -> [String] {
        let ids = try stringArray(key, count: count)
        for (index, id) in ids.enumerated() {
            try Identifier.validate(id, field: "\(path(key))[\(index)]")
        }
        return ids
    }

    public func int64(_ key: String, in range: ClosedRange<Int64> = .min ... .max) throws(ChatError) -> Int64 {
        guard let value = try optionalInt64(key, in: range) else {
            throw .invalidParams(field: path(key), reason: "is required")
        }
        return value
    }

    /// An integer; an integral double such as `2.0` is accepted, `2.5` is not.
    public func optionalInt64(_ key: String, in range: ClosedRange<Int64> = .min ... .max) throws(ChatError) -> Int64? {
        guard let value = member(key) else { return nil }
        guard case .number(let number) = value else {
            throw .invalidParams(field: path(key), reason: "must be an integer, not \(value.typeDescription)")
        }
        guard let integer = number.int64Value else {
            let double = number.doubleValue
            let reason = double.rounded() == double
                ? "is \(number), outside the 64-bit integer range"
                : "must be an integer, not \(number)"
            throw .invalidParams(field: path(key), reason: reason)
        }
        guard range.contains(integer) else {
            let reason: String
            if range.upperBound == .max {
                reason = "must be at least \(range.lowerBound), not \(integer)"
            } else if range.lowerBound == .min {
                reason = "must be at most \(range.upperBound), not \(integer)"
            } else {
                reason = "must be between \(range.lowerBound) and \(range.upperBound), not \(integer)"
            }
            throw .invalidParams(field: path(key), reason: reason)
        }
        return integer
    }

    public func int(_ key: String, in range: ClosedRange<Int>) throws(ChatError) -> Int {
        Int(try int64(key, in: Int64(range.lowerBound)...Int64(range.upperBound)))
    }

    public func optionalInt(_ key: String, in range: ClosedRange<Int>) throws(ChatError) -> Int? {
        try optionalInt64(key, in: Int64(range.lowerBound)...Int64(range.upperBound)).map { Int($0) }
    }

    /// An array of strings whose length is in `count`.
    public func stringArray(_ key: String, count: ClosedRange<Int>) throws(ChatError) -> [String] {
        guard let value = member(key) else { throw .invalidParams(field: path(key), reason: "is required") }
        guard case .array(let elements) = value else {
            throw .invalidParams(field: path(key), reason: "must be an array of strings, not \(value.typeDescription)")
        }
        guard count.contains(elements.count) else {
            let reason = elements.isEmpty
                ? "must not be empty"
                : "has \(elements.count) elements; the limit is \(count.upperBound)"
            throw .invalidParams(field: path(key), reason: reason)
        }
        var strings: [String] = []
        strings.reserveCapacity(elements.count)
        for (index, element) in elements.enumerated() {
            guard case .string(let string) = element else {
                throw .invalidParams(field: "\(path(key))[\(index)]", reason: "must be a string, not \(element.typeDescription)")
            }
            strings.append(string)
        }
        return strings
    }

    /// An array of strings whose length is in `count`, or nil when absent (or null).
    public func optionalStringArray(_ key: String, count: ClosedRange<Int>) throws(ChatError) -> [String]? {
        member(key) == nil ? nil : try stringArray(key, count: count)
    }

    public func bool(_ key: String) throws(ChatError) -> Bool {
        guard let value = try optionalBool(key) else { throw .invalidParams(field: path(key), reason: "is required") }
        return value
    }

    public func optionalBool(_ key: String) throws(ChatError) -> Bool? {
        guard let value = member(key) else { return nil }
        guard case .bool(let bool) = value else {
            throw .invalidParams(field: path(key), reason: "must be true or false, not \(value.typeDescription)")
        }
        return bool
    }

    /// A chat list by name: `"main"` or `"archive"`.
    public func optionalList(_ key: String) throws(ChatError) -> ChatList? {
        guard let name = try optionalString(key) else { return nil }
        guard let list = ChatList(rawValue: name) else {
            throw .invalidParams(field: path(key), reason: "must be \"main\" or \"archive\", not \"\(name)\"")
        }
        return list
    }
}
