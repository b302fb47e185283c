"""The HTTP front and what it serves: the request and response protocol, wire decoding, routing, the verbs,
discovery, OpenAPI, tables, protobuf, authentication and authorization.
"""
