/// A row a client shows: a chat's id and the revision of the content it shows. A client that
/// resumes a subscription sends its rows in its order (docs/PROTOCOL.md, The live feed).
public struct KnownRow: Hashable, Sendable {
    public var id: String
    public var revision: Int64

    public init(id: String, revision: Int64) {
        self.id = id
        self.revision = revision
    }
}
