import Foundation
import Hummingbird
import JSONCodec

/// The gateway's plain HTTP endpoints.
struct GatewayRoutes: Sendable {
    let core: GatewayCore

    func router() -> Router<BasicRequestContext> {
        let router = Router()
        let core = self.core
        router.get("/healthz") { _, _ -> Response in
            core.engine.isStopped
                ? Self.text(.serviceUnavailable, "the engine has stopped")
                : Self.text(.ok, "ok")
        }
        router.get("/metrics") { _, _ -> Response in
            Response(
                status: .ok, headers: [.contentType: "text/plain; version=0.0.4; charset=utf-8"],
                body: .init(byteBuffer: ByteBuffer(bytes: core.metrics.text(openSessions: core.engine.openSessions))))
        }
        router.get("/v1/feed") { request, _ -> Response in
            // Not an upgrade (a WebSocket upgrade never reaches the router): say what is wrong.
            switch await core.authenticate(authorization: request.headers[.authorization], query: request.uri.query) {
            case .failure(let refusal): return Self.text(refusal.status, refusal.reason)
            case .success: return Self.text(.badRequest, "GET /v1/feed is a WebSocket upgrade (Upgrade: websocket)")
            }
        }
        router.get("/dev/token") { request, _ -> Response in
            guard core.options.devTokens else { return Self.text(.notFound, "development tokens are off (devTokens)") }
            guard let user = request.uri.queryParameters["user"].map(String.init), !user.isEmpty else {
                return Self.text(.badRequest, "name the user: /dev/token?user=U")
            }
            guard (try? await core.engine.user(user)) ?? nil != nil else {
                return Self.text(.notFound, "no user '\(user)'")
            }
            let expiresAt = Date().addingTimeInterval(24 * 3600)
            let token = try await core.tokens.mint(user: user, expiresAt: expiresAt)
            let body = JSONValue.object([
                "token": .string(token), "expiresAt": .integer(Int(expiresAt.timeIntervalSince1970 * 1000)),
            ]).serialized()
            return Response(
                status: .ok, headers: [.contentType: "application/json", .cacheControl: "no-store"],
                body: .init(byteBuffer: ByteBuffer(bytes: body)))
        }
        if let webRoot = core.options.webRoot {
            let files = StaticFiles(root: webRoot)
            router.get("/") { _, _ in files.response(for: "/") }
            router.get("/**") { request, _ in files.response(for: request.uri.path) }
        }
        return router
    }

    static func text(_ status: HTTPResponse.Status, _ line: String) -> Response {
        Response(
            status: status, headers: [.contentType: "text/plain; charset=utf-8"],
            body: .init(byteBuffer: ByteBuffer(string: line + "\n")))
    }
}

/// The web client's files under one directory: only regular files inside it, with their content
/// types; anything else is 404.
struct StaticFiles: Sendable {
    let root: URL

    init(root: String) {
        self.root = URL(fileURLWithPath: root, isDirectory: true).standardizedFileURL
    }

    static let contentTypes: [String: String] = [
        "html": "text/html; charset=utf-8", "js": "text/javascript; charset=utf-8", "mjs": "text/javascript; charset=utf-8",
        "css": "text/css; charset=utf-8", "json": "application/json", "svg": "image/svg+xml", "png": "image/png",
        "ico": "image/x-icon", "txt": "text/plain; charset=utf-8", "map": "application/json", "webmanifest": "application/manifest+json",
    ]

    func response(for path: String) -> Response {
        let decoded = path.removingPercentEncoding ?? path
        var relative = decoded.hasSuffix("/") ? decoded + "index.html" : decoded
        while relative.hasPrefix("/") { relative.removeFirst() }
        let file = root.appendingPathComponent(relative).standardizedFileURL
        // Never a path outside the root (`..`, a symlink out of it).
        let resolved = file.resolvingSymlinksInPath().path
        let rootPath = root.resolvingSymlinksInPath().path
        guard !relative.split(separator: "/").contains(".."), resolved.hasPrefix(rootPath + "/"),
              let attributes = try? FileManager.default.attributesOfItem(atPath: resolved),
              attributes[.type] as? FileAttributeType == .typeRegular,
              let data = FileManager.default.contents(atPath: resolved)
        else { return GatewayRoutes.text(.notFound, "not found: \(path)") }
        let type = Self.contentTypes[file.pathExtension.lowercased()] ?? "application/octet-stream"
        return Response(
            status: .ok, headers: [.contentType: type, .cacheControl: "no-cache"],
            body: .init(byteBuffer: ByteBuffer(bytes: data)))
    }
}
