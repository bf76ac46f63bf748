// Loaded with `node --import` before server-everything's Streamable HTTP transport: its HTTP server listens on
// 127.0.0.1 only (the package listens on every interface), on the port PORT names (0: a free one), and says on
// stderr which port it got ("listening on 127.0.0.1:PORT"), so that a test guesses no port in advance.
import http from "node:http";

const listen = http.Server.prototype.listen;
http.Server.prototype.listen = function (port, ...rest) {
  const callback = rest.find((argument) => typeof argument === "function");
  this.once("listening", () => process.stderr.write(`listening on 127.0.0.1:${this.address().port}\n`));
  return listen.call(this, Number(port), "127.0.0.1", callback);
};
