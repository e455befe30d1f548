/** Stylesheets the embed build imports as text (esbuild's `text` loader, web/build.ts) for constructable stylesheets. */
declare module '*.css' {
  const text: string;
  export default text;
}
