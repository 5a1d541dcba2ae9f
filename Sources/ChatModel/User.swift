/// An account that has chat lists (docs/PROTOCOL.md, Users and sessions): the members of chats are users.
public struct User: Hashable, Sendable, Codable {
    public var id: String
    public var name: String
    /// Milliseconds since the Unix epoch.
    public var createdAt: Int64

    public init(id: String, name: String, createdAt: Int64) {
        self.id = id
        self.name = name
        self.createdAt = createdAt
    }

    /// The one user of a single-account database (docs/PROTOCOL.md, Users and sessions: one account): the user every event
    /// and query acts as when none is named.
    public static let defaultID = "me"
}
