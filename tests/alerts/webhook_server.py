"""A webhook receiver on 127.0.0.1 for the https webhook test: plain http, or TLS with a given
certificate. Appends each POST's body as one line to BODIES, writes its port to PORT_FILE, and
answers 200."""
import http.server
import os
import ssl
import sys


class Receiver(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        with open(self.server.bodies, "ab") as out:
            out.write(body + b"\n")
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args):
        pass


class Server(http.server.HTTPServer):
    def handle_error(self, request, client_address):
        pass  # a client that refused our certificate: nothing to say


def main():
    mode, port_file, bodies = sys.argv[1:4]
    server = Server(("127.0.0.1", 0), Receiver)
    server.bodies = bodies
    if mode == "tls":
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(sys.argv[4], sys.argv[5])
        server.socket = ctx.wrap_socket(server.socket, server_side=True)
    with open(port_file + ".tmp", "w") as out:
        out.write(str(server.server_address[1]))
    os.replace(port_file + ".tmp", port_file)
    server.serve_forever()


if __name__ == "__main__":
    main()
