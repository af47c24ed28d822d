/// Typed member access: the way protocol code reads a message it received.
///
/// A required member that is absent fails with ``JSONError/Reason/missingMember(_:)``;
/// a member of the wrong type fails with ``JSONError/Reason/wrongType(member:expected:actual:)``.
/// The `optional...` forms return `nil` for an absent member or an explicit `null`, and
/// still fail for a present member of the wrong type: a malformed optional member is an
/// error, not something to ignore.
extension JSONObject {
    /// Member `name`, which must be present.
    public func value(_ name: String) throws(JSONError) -> JSONValue {
        guard let value = self[name] else { throw JSONError(.missingMember(name)) }
        return value
    }

    /// Member `name` as a string; required.
    public func string(_ name: String) throws(JSONError) -> String {
        try require(name, .string, value(name).stringValue)
    }

    /// Member `name` as a string, `nil` when absent or null.
    public func optionalString(_ name: String) throws(JSONError) -> String? {
        guard let value = present(name) else { return nil }
        return try require(name, .string, value.stringValue)
    }

    /// Member `name` as an integer; required.
    public func int(_ name: String) throws(JSONError) -> Int {
        try require(name, .number, value(name).intValue)
    }

    /// Member `name` as an integer, `nil` when absent or null.
    public func optionalInt(_ name: String) throws(JSONError) -> Int? {
        guard let value = present(name) else { return nil }
        return try require(name, .number, value.intValue)
    }

    /// Member `name` as a number; required.
    public func double(_ name: String) throws(JSONError) -> Double {
        try require(name, .number, value(name).doubleValue)
    }

    /// Member `name` as a number, `nil` when absent or null.
    public func optionalDouble(_ name: String) throws(JSONError) -> Double? {
        guard let value = present(name) else { return nil }
        return try require(name, .number, value.doubleValue)
    }

    /// Member `name` as a boolean; required.
    public func bool(_ name: String) throws(JSONError) -> Bool {
        try require(name, .bool, value(name).boolValue)
    }

    /// Member `name` as a boolean, `nil` when absent or null.
    public func optionalBool(_ name: String) throws(JSONError) -> Bool? {
        guard let value = present(name) else { return nil }
        return try require(name, .bool, value.boolValue)
    }

    /// Member `name` as an object; required.
    public func object(_ name: String) throws(JSONError) -> JSONObject {
        try require(name, .object, value(name).objectValue)
    }

    /// Member `name` as an object, `nil` when absent or null.
    public func optionalObject(_ name: String) throws(JSONError) -> JSONObject? {
        guard let value = present(name) else { return nil }
        return try require(name, .object, value.objectValue)
    }

    /// Member `name` as an array; required.
    public func array(_ name: String) throws(JSONError) -> [JSONValue] {
        try require(name, .array, value(name).arrayValue)
    }

    /// Member `name` as an array, `nil` when absent or null.
    public func optionalArray(_ name: String) throws(JSONError) -> [JSONValue]? {
        guard let value = present(name) else { return nil }
        return try require(name, .array, value.arrayValue)
    }

    /// Member `name` as an array of strings; required.
    public func stringArray(_ name: String) throws(JSONError) -> [String] {
        let value = try value(name)
        guard let strings = value.stringArrayValue else { throw Self.mismatch(name, .array, value) }
        return strings
    }

    /// Member `name` as an array of strings, `nil` when absent or null.
    public func optionalStringArray(_ name: String) throws(JSONError) -> [String]? {
        guard let value = present(name) else { return nil }
        guard let strings = value.stringArrayValue else { throw Self.mismatch(name, .array, value) }
        return strings
    }

    /// Member `name` as an array of objects; required.
    public func objectArray(_ name: String) throws(JSONError) -> [JSONObject] {
        try Self.objects(in: array(name), member: name)
    }

    /// Member `name` as an array of objects, `nil` when absent or null.
    public func optionalObjectArray(_ name: String) throws(JSONError) -> [JSONObject]? {
        guard let elements = try optionalArray(name) else { return nil }
        return try Self.objects(in: elements, member: name)
    }

    private func present(_ name: String) -> JSONValue? {
        guard let value = self[name], !value.isNull else { return nil }
        return value
    }

    private func require<T>(_ name: String, _ kind: JSONKind, _ typed: T?) throws(JSONError) -> T {
        if let typed { return typed }
        throw Self.mismatch(name, kind, self[name] ?? .null)
    }

    private static func mismatch(_ name: String, _ kind: JSONKind, _ value: JSONValue) -> JSONError {
        // An integer expected but a fractional number given is the right kind with a bad value.
        if value.kind == kind { return JSONError(.invalidValue(member: name)) }
        return JSONError(.wrongType(member: name, expected: kind, actual: value.kind))
    }

    private static func objects(in elements: [JSONValue], member: String) throws(JSONError) -> [JSONObject] {
        var objects: [JSONObject] = []
        objects.reserveCapacity(elements.count)
        for element in elements {
            guard case .object(let object) = element else {
                throw JSONError(.wrongType(member: member, expected: .object, actual: element.kind))
            }
            objects.append(object)
        }
        return objects
    }
}
