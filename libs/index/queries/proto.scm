; Protocol Buffers: the package (`shop.v1`), services with their RPCs
; (`shop.v1.OrderService.PlaceOrder`, signature `rpc PlaceOrder(Req) returns (Resp)`),
; messages (nested ones inside theirs), enums; imports. An RPC is a method of its
; service, so "which service defines PlaceOrder" is a lookup.

(package (full_ident) @name) @package

(service (service_name (identifier) @name)) @definition.interface
(rpc (rpc_name (identifier) @name)) @definition.method
(message (message_name (identifier) @name)) @definition.class
(enum (enum_name (identifier) @name)) @definition.type

(import path: (string) @import.path) @import
